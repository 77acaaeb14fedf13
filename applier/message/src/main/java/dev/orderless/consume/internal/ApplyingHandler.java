package dev.orderless.consume.internal;

import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.TransientException;
import dev.orderless.consume.ConsumerBuilder;
import dev.orderless.consume.internal.ConsumerMetrics.DeadLetterReason;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.message.OperationDecoder;
import io.micrometer.observation.Observation;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to one delivery, whatever the protocol ({@link Delivery} settles it): one guarded apply, and
 * the delivery accepted only after MongoDB acknowledged the write.
 *
 * <ol>
 *   <li>Too large, undecodable, or naming a field the schema does not allow: dead-letter with the reason.
 *       Nothing is written to MongoDB.
 *   <li>Apply (with the history on, record it first: see {@link dev.orderless.history.RecordingApplier}).
 *       An outcome (applied, superseded, duplicate, collision): accept. Beyond the horizon, or a
 *       {@link CannotApplyException} (bad input, no progress, too large): dead-letter with its reason.
 *   <li>A transient MongoDB failure: keep the message, pause (doubling, bounded), apply again; it resumes
 *       by itself when MongoDB is back. While MongoDB is down for everyone the message holds without
 *       limit; while MongoDB is serving other messages it holds at most {@link HandlerSettings#maxHold()},
 *       then is dead-lettered as {@code held too long} with its last error (see {@link HoldClock}). A
 *       refusal for a reason of configuration holds like an outage, with an ERROR line per retry.
 *       Stopping ends the wait and hands the message back.
 *   <li>A dead letter is settled once the delivery says the dead-letter queue has it, which may be later
 *       (during a broker resource alarm): the thread goes on meanwhile. If it could not be sent, the message
 *       goes back to its queue: it is never accepted unless it was applied, found stale, or safely
 *       dead-lettered.
 * </ol>
 */
public final class ApplyingHandler {
    private static final Logger log = LoggerFactory.getLogger(ApplyingHandler.class);

    private final Applying applying;
    private final OperationDecoder decoder;
    private final HandlerSettings options;
    private final ConsumerMetrics metrics;
    private final RetryPause retryPause;
    private final HoldClock holdClock;
    private final ConsumeObservations observations;
    private final MongoWait mongoWait;
    private final GuardedApplier applier;

    public ApplyingHandler(GuardedApplier applier, Applying applying, OperationDecoder decoder, HandlerSettings options,
                           ConsumerMetrics metrics, RetryPause retryPause, ConsumeObservations observations) {
        this.observations = observations;
        this.applier = applier;
        this.mongoWait = new MongoWait(options.source());
        this.holdClock = new HoldClock(applier::answersWrites, options.maxHold());
        this.applying = applying;
        this.decoder = decoder;
        this.options = options;
        this.metrics = metrics;
        this.retryPause = retryPause;
    }

    /** Decodes, applies and settles one delivery (see the class comment). */
    public void handle(Delivery delivery) throws IOException {
        Observation observation = observations.consume(delivery);
        try (Observation.Scope scope = observation.openScope()) {
            Optional<Operation> op = decode(delivery);
            if (op.isPresent()) {
                applyHolding(delivery, op.get());
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

    /** The operation in {@code delivery}; empty if it is too large or undecodable, and then dead-lettered. */
    Optional<Operation> decode(Delivery delivery) {
        byte[] body = delivery.body();
        if (body.length > options.maxMessageBytes()) {
            LetterSubject subject = LetterSubject.peek(body);
            deadLetter(delivery, DeadLetterReason.OVERSIZED,
                    "oversized: " + body.length + " bytes, limit " + options.maxMessageBytes() + subject.about(), subject);
            return Optional.empty();
        }
        Operation op;
        try {
            op = decoder.decode(body);
        } catch (InvalidInputException e) {
            deadLetter(delivery, DeadLetterReason.of(e.kind()), e.reason(), LetterSubject.peek(body));
            return Optional.empty();
        } catch (RuntimeException e) {
            deadLetter(delivery, DeadLetterReason.BAD_INPUT, "undecodable: " + e, LetterSubject.peek(body));
            return Optional.empty();
        }
        observations.operation(op.entity(), op.seq());   // outside the try: its failure is not the message's
        return Optional.of(op);
    }

    /** Applies {@code op} of {@code delivery}, holding it through transient failures (see the class comment). */
    void applyHolding(Delivery delivery, Operation op) throws IOException {
        boolean[] retrying = {false};
        try {
            applyHolding(delivery, op, retrying);
        } finally {
            if (retrying[0]) {
                metrics.retryingEnded();
            }
        }
    }

    private void applyHolding(Delivery delivery, Operation op, boolean[] retrying) throws IOException {
        HoldClock.Hold hold = holdClock.hold();
        for (int attempt = 1; ; attempt++) {
            if (retryPause.stopping()) {
                requeue(delivery, op);
                return;
            }
            if (attempt > 1) {
                hold.beforeRetry();
            }
            if (attemptOnce(delivery, op, hold, attempt, retrying)) {
                return;
            }
            if (!retryPause.pause(attempt)) {
                requeue(delivery, op);
                return;
            }
        }
    }

    /**
     * A new hold for one message, for a consumer that keeps a failed message itself between attempts (Kafka's: it
     * renews the record's lock and polls again) and tries it with {@link #attempt}.
     */
    public HoldClock.Hold hold() {
        return holdClock.hold();
    }

    /**
     * One attempt at {@code op}, for a consumer that holds a failed message itself between attempts and pauses
     * before the next one ({@link #pause(int)}): the steps of the class comment, without the loop.
     *
     * @return true if the delivery is settled (applied, stale, refused, dead-lettered, or handed back because the
     *         consumer stops); false if it failed transiently and is still held: try it again after a pause
     */
    public boolean attempt(Delivery delivery, Operation op, HoldClock.Hold hold) throws IOException {
        if (retryPause.stopping()) {
            requeue(delivery, op);
            released(hold);
            return true;
        }
        hold.attempts++;
        if (hold.attempts > 1) {
            hold.beforeRetry();
        }
        boolean[] retrying = {hold.retrying};
        boolean settled = attemptOnce(delivery, op, hold, hold.attempts, retrying);
        hold.retrying = retrying[0];
        if (settled) {
            released(hold);
        }
        return settled;
    }

    /** True from the first apply that found MongoDB unavailable until MongoDB answers one again. */
    public boolean waiting() {
        return mongoWait.waitingFor().isPresent();
    }

    /**
     * Whether MongoDB takes a write now ({@link GuardedApplier#answersWrites()}): what a consumer that holds messages
     * itself asks, once, before trying them again while it waits for MongoDB. It may block for the MongoDB client's
     * server selection timeout.
     */
    public boolean answersWrites() {
        return applier.answersWrites();
    }

    /**
     * A message kept without an attempt while MongoDB is known to be down (the consumer waits): counted as retrying
     * from then until it is settled or released.
     */
    public void heldWithoutAttempt(HoldClock.Hold hold) {
        if (!hold.retrying) {
            hold.retrying = true;
            metrics.retryingStarted();
        }
    }

    /** A held message this consumer no longer holds (settled, or taken back by the broker): no longer retrying. */
    public void released(HoldClock.Hold hold) {
        if (hold.retrying) {
            hold.retrying = false;
            metrics.retryingEnded();
        }
    }

    /**
     * The pause before attempt {@code attempt + 1} of a held message ({@link ConsumerBuilder}'s back-off), at most
     * {@code atMost}.
     *
     * @return false if the consumer stops meanwhile
     */
    public boolean pause(int attempt, java.time.Duration atMost) {
        return retryPause.pause(attempt, atMost);
    }

    /** True once the consumer stops. */
    public boolean stopped() {
        return retryPause.stopping();
    }

    /** One attempt; true if settled, false if it failed transiently (counted, logged, the hold clock judged). */
    private boolean attemptOnce(Delivery delivery, Operation op, HoldClock.Hold hold, int attempt, boolean[] retrying)
            throws IOException {
        TransientException failure;
        try {
            Outcome outcome = observations.apply(() -> applying.apply(op));
            mongoAnswered();
            settleOutcome(delivery, op, outcome);
            return true;
        } catch (CannotApplyException e) {
            refuse(delivery, op, e);
            return true;
        } catch (InvalidConfigurationException e) {
            // the same for every message: hold it, like an outage, and say what to fix
            hold.down();
            mongoWait.unavailable("it refuses writes for a reason of configuration: " + e.getMessage());
            retryingFrom(retrying);
            metrics.retried();
            log.error("'{}' seq {} not applied, MongoDB refuses it for a reason of configuration; holding it,"
                    + " retry {} after a pause: {}", op.entity(), op.seq(), attempt, e.getMessage());
            return false;
        } catch (TransientException e) {
            failure = e;
            if (e.backendDown()) {
                mongoWait.unavailable(e.getMessage());
            }
        } catch (RuntimeException e) {
            log.error("'{}' seq {} not applied: unexpected {}; treated as transient", op.entity(), op.seq(),
                    e.toString(), e);
            failure = new TransientException("unexpected " + e, e, false);
        }
        retryingFrom(retrying);
        metrics.retried();
        if (hold.heldTooLong(failure)) {
            deadLetter(delivery, DeadLetterReason.HELD_TOO_LONG, "held too long: '" + op.entity()
                    + "' seq " + op.seq() + " failed for " + hold.heldSeconds() + " s while MongoDB served others;"
                    + " last error: " + failure.getMessage(), LetterSubject.of(op));
            return true;
        }
        if (failure.backendDown()) {
            // said once for the consumer (MongoWait), not for every message it holds
            log.debug("'{}' seq {} not applied, retry {} after a pause: {}", op.entity(), op.seq(), attempt,
                    failure.getMessage());
        } else {
            log.warn("'{}' seq {} not applied, retry {} after a pause: {}", op.entity(), op.seq(), attempt,
                    failure.getMessage());
        }
        return false;
    }

    /**
     * A held message that must not be held longer, for a reason of the broker's ({@code why}: Kafka's last delivery,
     * after which the broker would drop it if the consumer died holding it): dead-lettered with the reason.
     */
    public void deadLetterHeld(Delivery delivery, Operation op, HoldClock.Hold hold, String why) {
        deadLetter(delivery, DeadLetterReason.DELIVERY_LIMIT, why + ": '" + op.entity() + "' seq " + op.seq()
                + " not applied (MongoDB failed it " + hold.attempts + " times)", LetterSubject.of(op));
        released(hold);
    }

    /** The message failed once and is now retried: counted from its first failure until it is settled. */
    private void retryingFrom(boolean[] retrying) {
        if (!retrying[0]) {
            retrying[0] = true;
            metrics.retryingStarted();
        }
    }

    /** An outcome: accept it, or dead-letter it if it is beyond the horizon. */
    void settleOutcome(Delivery delivery, Operation op, Outcome outcome) {
        if (outcome.needsDeadLetter()) {
            deadLetter(delivery, DeadLetterReason.BEYOND_HORIZON, outcome.tag() + " (entity '"
                    + op.entity() + "', seq " + op.seq() + "): older than the tombstone grace period", LetterSubject.of(op));
        } else {
            accept(delivery, op, outcome);
        }
    }

    /** An operation MongoDB can never apply: dead-letter it with its reason. */
    void refuse(Delivery delivery, Operation op, CannotApplyException e) {
        if (e.kind() == CannotApplyException.Kind.NO_PROGRESS) {
            mongoAnswered();   // MongoDB answered; bad input and too large may not have reached it
        }
        deadLetter(delivery, DeadLetterReason.of(e.kind()), e.reason(), LetterSubject.of(op));
    }

    /** MongoDB answered for this consumer: what the hold clock counts as "serving", and the end of a wait. */
    void mongoAnswered() {
        holdClock.completed();
        mongoWait.answered();
    }

    /** What this consumer waits for, while it waits for MongoDB ({@link MongoWait}). */
    public java.util.Optional<String> waitingFor() {
        return mongoWait.waitingFor();
    }

    boolean stopping() {
        return retryPause.stopping();
    }

    /**
     * Hands the delivery to the dead-letter queue and goes on; it is counted once the letter is safe, or
     * handed back if it could not be sent (possibly later, from another thread).
     */
    private void deadLetter(Delivery delivery, DeadLetterReason category, String reason, LetterSubject subject) {
        observations.outcome("dead_lettered");
        CompletableFuture<Void> settled;
        try {
            settled = delivery.deadLetter(category.tag(), reason, subject).toCompletableFuture();
        } catch (RuntimeException e) {
            settled = CompletableFuture.failedFuture(e);
        }
        if (settled.isCompletedExceptionally()) {
            retryPause.pause(1);   // a dead letter that fails at once must not become a redelivery loop
        }
        settled.whenComplete((ok, failure) -> {
            if (failure == null) {
                metrics.deadLettered(category);
                log.warn("dead-lettered to {}: {}", options.deadLetters(), reason);
            } else {
                metrics.requeued();
                log.error("not dead-lettered, the message goes back to its queue: {} ({})", failure.getMessage(),
                        reason);
            }
        });
    }

    /**
     * Accepts an applied message. If the connection is gone (the broker or the connection was cut), the write
     * stands and only the settlement is lost: the broker redelivers the message and its apply is a harmless
     * DUPLICATE. So this is a warning naming the message, not a retry of an apply that succeeded.
     */
    private void accept(Delivery delivery, Operation op, Outcome outcome) {
        try {
            observations.outcome(outcome.tag());
            delivery.accept();
            metrics.outcome(outcome);   // counted once accepted: a redelivery after a lost ack is counted once, as a duplicate
        } catch (IOException | RuntimeException e) {
            log.warn("'{}' seq {} {} but not acked, the connection closed ({}): the broker redelivers it, as a duplicate",
                    op.entity(), op.seq(), outcome.tag(), e.toString());
        }
    }

    void requeue(Delivery delivery, Operation op) throws IOException {
        observations.outcome("requeued");
        delivery.requeue();
        metrics.requeued();
        log.info("stopping: '{}' seq {} handed back to the queue unapplied", op.entity(), op.seq());
    }
}
