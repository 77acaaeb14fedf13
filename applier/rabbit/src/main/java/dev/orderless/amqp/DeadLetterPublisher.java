package dev.orderless.amqp;

import dev.orderless.broker.BrokerBlocking;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ShutdownSignalException;
import dev.orderless.broker.internal.AmqpEncoding;
import dev.orderless.consume.internal.ConsumerMetrics;
import dev.orderless.consume.internal.DeadLetterFields;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * The default {@link DeadLetterRecoverer}: republishes to the dead-letter queue on a connection of its
 * own (the factory's publisher connection), never on the consumer's, so that a broker blocking
 * publishers during a resource alarm cannot stop the consumer's acks. Works on any AMQP 0-9-1 broker.
 *
 * <ol>
 *   <li>While the broker blocks publishing ({@link BrokerBlocking}), a dead letter is held, not sent:
 *       its original stays unacked (so holding is bounded by the consumers' prefetch) and the consumer
 *       goes on with the next message. When blocking ends, the held letters are sent ({@link HeldLetters}).
 *   <li>Otherwise it is published, mandatory and in confirm mode, with a header naming it. The original
 *       is acked when the broker confirms it; it is handed back if the broker nacks or returns it (the
 *       dead-letter queue is gone), if the channel closes first, or if no confirm comes within the
 *       confirm timeout counted only while the broker is not blocking (a letter sent just before an
 *       alarm waits for its confirm, so it is never sent twice; {@link UnconfirmedLetters}).
 *   <li>A held letter whose consumer channel closed (the consumer stopped) is dropped: the broker
 *       redelivers its original, which is dead-lettered then.
 * </ol>
 * The original body, properties and headers are kept, with {@link DeadLetterHeaders} added and cut to
 * what can be sent ({@link DeadLetterHeaders#sendable}). Exactly once in effect, except when the publisher
 * channel fails with letters unconfirmed: those are handed back and may reach the dead-letter queue twice.
 */
final class DeadLetterPublisher implements DeadLetterRecoverer, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeadLetterPublisher.class);
    private static final Duration FAILURE_PAUSE = Duration.ofSeconds(1);
    /** Dead letters held now, while the broker blocks publishers. */
    static final String HELD_GAUGE = "orderless.consume.dead_letters.held";

    private final ConnectionFactory factory;
    private final String queue;
    private final String deadLetterQueue;
    private final long confirmTimeoutNanos;
    private final BrokerBlocking blocking;
    private final Runnable onUnblocked;
    private final ScheduledExecutorService settle;
    private final HeldLetters<Letter> held = new HeldLetters<>();                        // guarded by this
    /** Letters sent and not confirmed, by channel generation and publish seq (seqs restart per channel). */
    private final UnconfirmedLetters<Letter> unconfirmed = new UnconfirmedLetters<>();
    /** Letters handed in and not settled yet (the original not yet acked or handed back), held ones included. */
    private final AtomicInteger unsettled = new AtomicInteger();
    private long generation;                                                          // guarded by this
    private final Map<String, String> returned = new ConcurrentHashMap<>();
    private Channel channel;                                                          // guarded by this
    private boolean closed;                                                           // guarded by this
    private volatile long unblockedAtNanos = System.nanoTime();

    /** One dead letter on its way; {@code done} completes once the broker has it. */
    private record Letter(String id, AMQP.BasicProperties properties, byte[] body, Channel consumerChannel,
                          CompletableFuture<Void> done) {
    }

    DeadLetterPublisher(ConnectionFactory factory, BrokerBlocking blocking, String queue, String deadLetterQueue,
                        Duration confirmTimeout, MeterRegistry meters) {
        this.factory = factory;
        this.blocking = blocking;
        this.queue = queue;
        this.deadLetterQueue = deadLetterQueue;
        this.confirmTimeoutNanos = confirmTimeout.toNanos();
        this.settle = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "orderless-dead-letters-" + queue);
            t.setDaemon(true);
            return t;
        });
        settle.scheduleWithFixedDelay(this::expire, 1, 1, TimeUnit.SECONDS);
        this.onUnblocked = () -> {
            unblockedAtNanos = System.nanoTime();
            if (!settle.isShutdown()) {
                settle.execute(this::sendHeld);
            }
        };
        blocking.onUnblocked(onUnblocked);
        ConsumerMetrics.withoutGauge(meters, HELD_GAUGE, "queue", queue);
        Gauge.builder(HELD_GAUGE, this, DeadLetterPublisher::heldCount)
                .description("dead letters waiting for the broker to stop blocking publishers")
                .tag("queue", queue).register(meters);
    }

    @Override
    public CompletionStage<Void> recover(Message message, Channel consumerChannel, String reason) {
        Letter letter = letter(message, consumerChannel, reason);
        unsettled.incrementAndGet();
        synchronized (this) {
            Optional<String> blocked = blocking.reason();
            switch (HeldLetters.decide(closed, blocked.isPresent())) {
                case REFUSE -> {
                    unsettled.decrementAndGet();
                    letter.done().completeExceptionally(new IOException("consumer stopping"));
                }
                case HOLD -> {
                    held.hold(letter);
                    log.info("dead letter held while RabbitMQ blocks publishers ({}): {}", blocked.get(), reason);
                }
                case SEND -> send(letter);
            }
        }
        return letter.done();
    }

    /** The letter to send, its properties cut to what the connection takes ({@link DeadLetterHeaders#sendable}). */
    private Letter letter(Message message, Channel consumerChannel, String reason) {
        String id = UUID.randomUUID().toString();
        AMQP.BasicProperties properties = DeadLetterHeaders.sendable(message, queue, reason, id, frameMax(consumerChannel));
        return new Letter(id, properties, message.getBody(), consumerChannel, new CompletableFuture<>());
    }

    private static int frameMax(Channel consumerChannel) {
        try {
            return consumerChannel.getConnection().getFrameMax();
        } catch (RuntimeException e) {
            return AmqpEncoding.DEFAULT_FRAME_MAX;
        }
    }

    /** Publishes one letter; called holding the monitor, so publishes are serialized on the one channel. */
    private void send(Letter letter) {
        UnconfirmedLetters.Sent sent = null;
        try {
            Channel ch = channel();
            sent = new UnconfirmedLetters.Sent(generation, ch.getNextPublishSeqNo());
            unconfirmed.sent(sent, letter, System.nanoTime());
            ch.basicPublish("", deadLetterQueue, true, letter.properties(), letter.body());
        } catch (IOException | com.rabbitmq.client.AlreadyClosedException e) {
            forget(sent);
            fail(letter, "dead-letter publish failed: " + e);
            dropChannel();   // the channel is broken: the next letter opens a new one
        } catch (RuntimeException e) {
            forget(sent);
            fail(letter, "dead-letter publish failed: " + e);
            // the client numbered this publish before it failed: the channel's confirms no longer match its letters
            dropChannel();
        }
    }

    private void forget(UnconfirmedLetters.Sent sent) {
        if (sent != null) {
            unconfirmed.forget(sent);
        }
    }

    private Channel channel() throws IOException {
        if (channel != null && channel.isOpen()) {
            return channel;
        }
        // a channel of the client's own, not one of Spring's cached (and perhaps confirm-correlating) ones
        Channel ch = factory.createConnection().getDelegate().createChannel();
        ch.confirmSelect();
        ch.addReturnListener(r -> {
            Object id = r.getProperties().getHeaders() == null ? null : r.getProperties().getHeaders().get(DeadLetterFields.LETTER_ID);
            if (id != null) {
                returned.put(id.toString(), r.getReplyText() + " (" + r.getReplyCode() + ")");
            }
        });
        long gen = ++generation;
        ch.addConfirmListener(new ConfirmListener() {
            @Override
            public void handleAck(long seq, boolean multiple) {
                confirmed(gen, seq, multiple, true);
            }

            @Override
            public void handleNack(long seq, boolean multiple) {
                confirmed(gen, seq, multiple, false);
            }
        });
        ch.addShutdownListener(cause -> channelClosed(gen, cause));
        channel = ch;
        return ch;
    }

    private void confirmed(long gen, long seq, boolean multiple, boolean ack) {
        for (Letter letter : unconfirmed.confirmed(gen, seq, multiple)) {
            String returnedWhy = returned.remove(letter.id());
            if (returnedWhy != null) {
                fail(letter, "dead-letter queue '" + deadLetterQueue + "' did not take it: " + returnedWhy);
            } else if (!ack) {
                fail(letter, "the broker nacked the dead-letter publish");
            } else {
                settleLater(() -> {
                    letter.done().complete(null);   // runs the consumer's ack
                    unsettled.decrementAndGet();
                });
            }
        }
    }

    private void channelClosed(long gen, ShutdownSignalException cause) {
        unconfirmed.channelClosed(gen).forEach(letter -> fail(letter, "dead-letter channel closed before the confirm: "
                + cause.getMessage()));
    }

    /** Fails letters whose confirm is overdue, counting only time the broker was not blocking. */
    private void expire() {
        if (blocking.reason().isPresent()) {
            return;
        }
        for (Letter letter : unconfirmed.overdue(System.nanoTime(), unblockedAtNanos, confirmTimeoutNanos)) {
            fail(letter, "no confirm for the dead-letter publish within "
                    + Duration.ofNanos(confirmTimeoutNanos).toMillis() + " ms");
        }
    }

    private synchronized void sendHeld() {
        for (Optional<HeldLetters.Release<Letter>> next = release(); next.isPresent(); next = release()) {
            Letter letter = next.get().letter();
            if (next.get().send()) {
                send(letter);
            } else {
                unsettled.decrementAndGet();
                letter.done().completeExceptionally(new IOException("consumer channel closed; redelivered instead"));
            }
        }
    }

    private Optional<HeldLetters.Release<Letter>> release() {
        return held.release(closed, blocking.reason().isPresent(), letter -> letter.consumerChannel().isOpen());
    }

    /** Hands the original back after a pause, so a failing publish does not become a redelivery loop. */
    private void fail(Letter letter, String why) {
        Runnable handBack = () -> {
            letter.done().completeExceptionally(new IOException(why));   // runs the consumer's nack
            unsettled.decrementAndGet();
        };
        try {
            settle.schedule(handBack, FAILURE_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            handBack.run();
        }
    }

    /** Settles off the connection's thread; after close, where it happens to be. */
    private void settleLater(Runnable action) {
        try {
            settle.execute(action);
        } catch (RejectedExecutionException stopped) {
            action.run();
        }
    }

    private synchronized int heldCount() {
        return held.count();
    }

    private synchronized void dropChannel() {
        Channel ch = channel;
        channel = null;
        if (blocking.reason().isPresent()) {
            return;   // a close would wait for a broker that reads nothing; the connection's end closes it
        }
        if (ch != null && ch.isOpen()) {
            try {
                ch.close();
            } catch (IOException | TimeoutException | RuntimeException e) {
                log.debug("closing the dead-letter channel: {}", e.toString());
            }
        }
    }

    /**
     * Waits, at most {@code atMost} and only while the broker does not block, until every letter sent is
     * settled (confirmed and its original acked, or handed back); held letters stay held.
     */
    void awaitConfirms(Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (unsettled.get() > heldCount() && System.nanoTime() < deadline && blocking.reason().isEmpty()) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /** Drops held letters (their originals go back to the queue with the consumer's channel) and stops. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            held.dropAll().forEach(l -> {
                unsettled.decrementAndGet();
                l.done().completeExceptionally(new IOException("consumer stopped"));
            });
        }
        blocking.removeOnUnblocked(onUnblocked);
        dropChannel();
        settle.shutdown();
    }
}
