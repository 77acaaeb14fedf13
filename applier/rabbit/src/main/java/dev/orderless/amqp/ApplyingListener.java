package dev.orderless.amqp;

import com.rabbitmq.client.Channel;
import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.TransientException;
import dev.orderless.amqp.ConsumerMetrics.DeadLetterReason;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.message.OperationDecoder;
import io.micrometer.observation.Observation;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * The thin Rabbit adapter: one delivery in, one guarded apply, one ack. Manual acks, always after
 * MongoDB acknowledged the write.
 *
 * <ol>
 *   <li>Too large, undecodable, or naming a field the schema does not allow: dead-letter with the reason,
 *       then ack. Nothing is written to MongoDB.
 *   <li>Apply (with the history on, record it first: see {@link dev.orderless.history.RecordingApplier}).
 *       An outcome (applied, superseded, duplicate, collision): ack. Beyond the horizon, or a
 *       {@link CannotApplyException} (bad input, no progress, too large): dead-letter with its reason,
 *       then ack.
 *   <li>A transient MongoDB failure: keep the message, pause (doubling, bounded), apply again; it resumes
 *       by itself when MongoDB is back. While MongoDB is down for everyone the message holds without
 *       limit; while MongoDB is serving other messages it holds at most {@link ConsumerOptions#maxHold()},
 *       then is dead-lettered as {@code held too long} with its last error (see {@link HoldClock}). A
 *       refusal for a reason of configuration holds like an outage, with an ERROR line per retry.
 *       Stopping ends the wait and hands the message back unacked.
 *   <li>A dead letter is acked once the recoverer says the dead-letter queue has it, which may be later
 *       (during a broker resource alarm): the thread goes on meanwhile. If the dead-letter publish fails,
 *       the message is handed back unacked after a pause: it is never acked unless it was applied, found
 *       stale, or safely dead-lettered.
 * </ol>
 */
final class ApplyingListener implements ChannelAwareMessageListener {
    private static final Logger log = LoggerFactory.getLogger(ApplyingListener.class);

    private final Applying applying;
    private final OperationDecoder decoder;
    private final DeadLetterRecoverer recoverer;
    private final ConsumerOptions options;
    private final ConsumerMetrics metrics;
    private final RetryPause retryPause;
    private final HoldClock holdClock;
    private final ConsumeObservations observations;

    ApplyingListener(GuardedApplier applier, Applying applying, OperationDecoder decoder, DeadLetterRecoverer recoverer,
                     ConsumerOptions options, ConsumerMetrics metrics, RetryPause retryPause,
                     ConsumeObservations observations) {
        this.observations = observations;
        this.holdClock = new HoldClock(applier::answersWrites, options.maxHold());
        this.applying = applying;
        this.decoder = decoder;
        this.recoverer = recoverer;
        this.options = options;
        this.metrics = metrics;
        this.retryPause = retryPause;
    }

    @Override
    public void onMessage(Message message, Channel channel) throws IOException {
        Observation observation = observations.consume(message);
        try (Observation.Scope scope = observation.openScope()) {
            Optional<Operation> op = decode(message, channel);
            if (op.isPresent()) {
                applyHolding(message, channel, op.get());
            }
        } catch (IOException | RuntimeException e) {
            observation.error(e);
            throw e;
        } finally {
            observation.stop();
        }
    }

    Applying applying() {
        return applying;
    }

    ConsumeObservations observations() {
        return observations;
    }

    /** The operation in {@code message}; empty if it is too large or undecodable, and then dead-lettered. */
    Optional<Operation> decode(Message message, Channel channel) {
        byte[] body = message.getBody();
        if (body.length > options.maxMessageBytes()) {
            deadLetter(message, channel, DeadLetterReason.OVERSIZED,
                    "oversized: " + body.length + " bytes, limit " + options.maxMessageBytes());
            return Optional.empty();
        }
        Operation op;
        try {
            op = decoder.decode(body);
        } catch (InvalidInputException e) {
            deadLetter(message, channel, DeadLetterReason.BAD_INPUT, e.reason());
            return Optional.empty();
        } catch (RuntimeException e) {
            deadLetter(message, channel, DeadLetterReason.BAD_INPUT, "undecodable: " + e);
            return Optional.empty();
        }
        observations.operation(op.entity(), op.seq());   // outside the try: its failure is not the message's
        return Optional.of(op);
    }

    /** Applies {@code op} of {@code message}, holding it through transient failures (see the class comment). */
    void applyHolding(Message message, Channel channel, Operation op) throws IOException {
        boolean[] held = {false};
        try {
            applyHolding(message, channel, op, held);
        } finally {
            if (held[0]) {
                metrics.holdEnded();
            }
        }
    }

    private void applyHolding(Message message, Channel channel, Operation op, boolean[] held) throws IOException {
        long tag = message.getMessageProperties().getDeliveryTag();
        HoldClock.Hold hold = holdClock.hold();
        for (int attempt = 1; ; attempt++) {
            if (retryPause.stopping()) {
                requeue(channel, tag, op);
                return;
            }
            if (attempt > 1) {
                hold.beforeRetry();
            }
            TransientException failure;
            try {
                Outcome outcome = observations.apply(() -> applying.apply(op));
                holdClock.completed();
                settleOutcome(message, channel, op, outcome);
                return;
            } catch (CannotApplyException e) {
                refuse(message, channel, e);
                return;
            } catch (InvalidConfigurationException e) {
                // the same for every message: hold it, like an outage, and say what to fix
                hold.down();
                heldFrom(held);
                metrics.retried();
                log.error("'{}' seq {} not applied, MongoDB refuses it for a reason of configuration; holding it,"
                        + " retry {} after a pause: {}", op.entity(), op.seq(), attempt, e.getMessage());
                if (!retryPause.pause(attempt)) {
                    requeue(channel, tag, op);
                    return;
                }
                continue;
            } catch (TransientException e) {
                failure = e;
            } catch (RuntimeException e) {
                log.error("'{}' seq {} not applied: unexpected {}; treated as transient", op.entity(), op.seq(),
                        e.toString(), e);
                failure = new TransientException("unexpected " + e, e, false);
            }
            heldFrom(held);
            metrics.retried();
            if (hold.heldTooLong(failure)) {
                deadLetter(message, channel, DeadLetterReason.HELD_TOO_LONG, "held too long: '" + op.entity()
                        + "' seq " + op.seq() + " failed for " + hold.heldSeconds() + " s while MongoDB served others;"
                        + " last error: " + failure.getMessage());
                return;
            }
            log.warn("'{}' seq {} not applied, retry {} after a pause: {}", op.entity(), op.seq(), attempt,
                    failure.getMessage());
            if (!retryPause.pause(attempt)) {
                requeue(channel, tag, op);
                return;
            }
        }
    }

    /** The message failed once and is now held: counted from its first failure until it is settled. */
    private void heldFrom(boolean[] held) {
        if (!held[0]) {
            held[0] = true;
            metrics.holdStarted();
        }
    }

    /** An outcome: ack it, or dead-letter it if it is beyond the horizon. */
    void settleOutcome(Message message, Channel channel, Operation op, Outcome outcome) {
        if (outcome.needsDeadLetter()) {
            deadLetter(message, channel, DeadLetterReason.BEYOND_HORIZON, outcome.tag() + " (entity '"
                    + op.entity() + "', seq " + op.seq() + "): older than the tombstone grace period");
        } else {
            ack(channel, message.getMessageProperties().getDeliveryTag(), op, outcome);
        }
    }

    /** An operation MongoDB can never apply: dead-letter it with its reason. */
    void refuse(Message message, Channel channel, CannotApplyException e) {
        if (e.kind() == CannotApplyException.Kind.NO_PROGRESS) {
            holdClock.completed();   // MongoDB answered; bad input and too large may not have reached it
        }
        deadLetter(message, channel, DeadLetterReason.of(e.kind()), e.reason());
    }

    /** MongoDB answered for this consumer: what the hold clock counts as "serving". */
    void mongoAnswered() {
        holdClock.completed();
    }

    boolean stopping() {
        return retryPause.stopping();
    }

    /**
     * Hands the message to the recoverer and goes on; it is acked once the dead letter is safe, or handed
     * back if it could not be sent (possibly later, from another thread: see {@link DeadLetterRecoverer}).
     */
    private void deadLetter(Message message, Channel channel, DeadLetterReason category, String reason) {
        long tag = message.getMessageProperties().getDeliveryTag();
        observations.outcome("dead_lettered");
        // the kind travels with the message, so any recoverer's letter carries it (DeadLetterQueue sorts by it)
        message.getMessageProperties().setHeader(DeadLetterHeaders.REASON_KIND, category.name().toLowerCase(Locale.ROOT));
        java.util.concurrent.CompletableFuture<Void> sent;
        try {
            sent = recoverer.recover(message, channel, reason).toCompletableFuture();
        } catch (RuntimeException e) {
            sent = java.util.concurrent.CompletableFuture.failedFuture(e);
        }
        if (sent.isCompletedExceptionally()) {
            retryPause.pause(1);   // a recoverer that fails at once must not become a redelivery loop
        }
        sent.whenComplete((ok, failure) -> settle(channel, tag, category, reason, failure));
    }

    private void settle(Channel channel, long tag, DeadLetterReason category, String reason, Throwable failure) {
        try {
            if (failure == null) {
                channel.basicAck(tag, false);
                metrics.deadLettered(category);
                log.warn("dead-lettered to {}: {}", options.deadLetterQueue(), reason);
            } else {
                channel.basicNack(tag, false, true);
                metrics.requeued();
                log.error("dead-letter publish failed, handed the message back: {} ({})", failure.getMessage(), reason);
            }
        } catch (IOException | RuntimeException e) {
            // the consumer's channel closed meanwhile: the broker redelivers the message
            log.warn("could not settle a dead-lettered message ({}); the broker redelivers it: {}", e, reason);
        }
    }

    /**
     * Acks an applied message. If the channel is gone (the broker or the connection was cut), the write
     * stands and only the ack is lost: the broker redelivers the message and its apply is a harmless
     * DUPLICATE. So this is a warning naming the message, not a retry of an apply that succeeded.
     */
    private void ack(Channel channel, long tag, Operation op, Outcome outcome) {
        try {
            observations.outcome(outcome.tag());
            channel.basicAck(tag, false);
            metrics.outcome(outcome);   // counted once acked: a redelivery after a lost ack is counted once, as a duplicate
        } catch (IOException | RuntimeException e) {
            log.warn("'{}' seq {} {} but not acked, the channel closed ({}): the broker redelivers it, as a duplicate",
                    op.entity(), op.seq(), outcome.tag(), e.toString());
        }
    }

    void requeue(Channel channel, long tag, Operation op) throws IOException {
        observations.outcome("requeued");
        channel.basicNack(tag, false, true);
        metrics.requeued();
        log.info("stopping: '{}' seq {} handed back to the queue unapplied", op.entity(), op.seq());
    }
}
