package dev.orderless.amqp;

import com.rabbitmq.client.AMQP;
import dev.orderless.amqp.internal.AmqpEncoding;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ShutdownSignalException;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
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
 *   <li>While the broker blocks publishing ({@link BrokerBlocking}), a dead letter is parked, not sent:
 *       its original stays unacked (so parking is bounded by the consumers' prefetch) and the consumer
 *       goes on with the next message. When blocking ends, the parked letters are sent.
 *   <li>Otherwise it is published, mandatory and in confirm mode, with a header naming it. The original
 *       is acked when the broker confirms it; it is handed back if the broker nacks or returns it (the
 *       dead-letter queue is gone), if the channel closes first, or if no confirm comes within the
 *       confirm timeout counted only while the broker is not blocking (a letter sent just before an
 *       alarm waits for its confirm, so it is never sent twice).
 *   <li>A parked letter whose consumer channel closed (the consumer stopped) is dropped: the broker
 *       redelivers its original, which is dead-lettered then.
 * </ol>
 * The original body, properties and headers are kept, with {@link DeadLetterHeaders} added. Exactly once in effect, except when the publisher channel fails with
 * letters unconfirmed: those are handed back and may reach the dead-letter queue twice.
 */
final class DeadLetterPublisher implements DeadLetterRecoverer, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeadLetterPublisher.class);
    private static final Duration FAILURE_PAUSE = Duration.ofSeconds(1);

    private final ConnectionFactory factory;
    private final String queue;
    private final String deadLetterQueue;
    private final long confirmTimeoutNanos;
    private final BrokerBlocking blocking;
    private final Runnable onUnblocked;
    private final ScheduledExecutorService settle;
    private final ArrayDeque<Letter> parked = new ArrayDeque<>();                       // guarded by this
    /** Letters sent and not confirmed, by channel generation and publish seq (seqs restart per channel). */
    private final ConcurrentSkipListMap<Sent, Letter> unconfirmed = new ConcurrentSkipListMap<>();
    /** Letters handed in and not settled yet (the original not yet acked or handed back), parked ones included. */
    private final AtomicInteger unsettled = new AtomicInteger();
    private long generation;                                                          // guarded by this
    private final Map<String, String> returned = new ConcurrentHashMap<>();
    private Channel channel;                                                          // guarded by this
    private boolean closed;                                                           // guarded by this
    private volatile long unblockedAtNanos = System.nanoTime();

    /** Where a letter went: the channel's generation and its publish seq on that channel. */
    private record Sent(long generation, long seq) implements Comparable<Sent> {
        @Override
        public int compareTo(Sent other) {
            int byGeneration = Long.compare(generation, other.generation);
            return byGeneration != 0 ? byGeneration : Long.compare(seq, other.seq);
        }
    }

    /** One dead letter on its way; {@code done} completes once the broker has it. */
    private record Letter(String id, AMQP.BasicProperties properties, byte[] body, Channel consumerChannel,
                          CompletableFuture<Void> done, long[] sentAtNanos) {
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
                settle.execute(this::sendParked);
            }
        };
        blocking.onUnblocked(onUnblocked);
        ConsumerMetrics.withoutGauge(meters, "orderless.consume.dead_letters.parked", "queue", queue);
        Gauge.builder("orderless.consume.dead_letters.parked", this, DeadLetterPublisher::parkedCount)
                .description("dead letters waiting for the broker to stop blocking publishers")
                .tag("queue", queue).register(meters);
    }

    @Override
    public CompletionStage<Void> recover(Message message, Channel consumerChannel, String reason) {
        Letter letter = letter(message, consumerChannel, reason);
        unsettled.incrementAndGet();
        synchronized (this) {
            if (closed) {
                unsettled.decrementAndGet();
                letter.done().completeExceptionally(new IOException("consumer stopping"));
            } else if (blocking.reason().isPresent()) {
                parked.add(letter);
                log.info("dead letter parked while RabbitMQ blocks publishers ({}): {}", blocking.reason().get(), reason);
            } else {
                send(letter);
            }
        }
        return letter.done();
    }

    /**
     * The letter to send. If the original's properties cannot be sent again as they are (checked before
     * they touch the channel, see {@link AmqpEncoding}), the letter carries only orderless's headers and
     * the reason says what was dropped: a letter that cannot be sent would come back as its original,
     * again and again.
     */
    private Letter letter(Message message, Channel consumerChannel, String reason) {
        String id = UUID.randomUUID().toString();
        AMQP.BasicProperties properties = DeadLetterHeaders.properties(message, queue, reason, id);
        Optional<String> unsendable = AmqpEncoding.unsendable(properties, message.getBody().length,
                frameMax(consumerChannel));
        if (unsendable.isPresent()) {
            String why = reason + "; its original properties were dropped: " + unsendable.get();
            properties = DeadLetterHeaders.minimal(message, queue, why, id, true);
            if (AmqpEncoding.unsendable(properties, message.getBody().length, frameMax(consumerChannel)).isPresent()) {
                properties = DeadLetterHeaders.minimal(message, queue, why, id, false);   // the history was the trouble
            }
        }
        return new Letter(id, properties, message.getBody(), consumerChannel, new CompletableFuture<>(), new long[1]);
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
        Sent sent = null;
        try {
            Channel ch = channel();
            sent = new Sent(generation, ch.getNextPublishSeqNo());
            letter.sentAtNanos()[0] = System.nanoTime();
            unconfirmed.put(sent, letter);
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

    private void forget(Sent sent) {
        if (sent != null) {
            unconfirmed.remove(sent);
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
            Object id = r.getProperties().getHeaders() == null ? null : r.getProperties().getHeaders().get(DeadLetterHeaders.LETTER_ID);
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
        List<Letter> letters = new ArrayList<>();
        if (multiple) {
            var upTo = unconfirmed.subMap(new Sent(gen, 0), true, new Sent(gen, seq), true);
            letters.addAll(upTo.values());
            upTo.clear();
        } else {
            Letter one = unconfirmed.remove(new Sent(gen, seq));
            if (one != null) {
                letters.add(one);
            }
        }
        for (Letter letter : letters) {
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
        var ofChannel = unconfirmed.subMap(new Sent(gen, 0), true, new Sent(gen, Long.MAX_VALUE), true);
        List<Letter> lost = new ArrayList<>(ofChannel.values());
        ofChannel.clear();
        lost.forEach(letter -> fail(letter, "dead-letter channel closed before the confirm: " + cause.getMessage()));
    }

    /** Fails letters whose confirm is overdue, counting only time the broker was not blocking. */
    private void expire() {
        if (blocking.reason().isPresent()) {
            return;
        }
        long now = System.nanoTime();
        for (var e : unconfirmed.entrySet()) {
            Letter letter = e.getValue();
            if (now - Math.max(letter.sentAtNanos()[0], unblockedAtNanos) > confirmTimeoutNanos
                    && unconfirmed.remove(e.getKey(), letter)) {
                fail(letter, "no confirm for the dead-letter publish within "
                        + Duration.ofNanos(confirmTimeoutNanos).toMillis() + " ms");
            }
        }
    }

    private synchronized void sendParked() {
        while (!parked.isEmpty() && !closed && blocking.reason().isEmpty()) {
            Letter letter = parked.poll();
            if (letter.consumerChannel().isOpen()) {
                send(letter);
            } else {
                unsettled.decrementAndGet();
                letter.done().completeExceptionally(new IOException("consumer channel closed; redelivered instead"));
            }
        }
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

    private synchronized int parkedCount() {
        return parked.size();
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
     * settled (confirmed and its original acked, or handed back); parked letters stay parked.
     */
    void awaitConfirms(Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (unsettled.get() > parkedCount() && System.nanoTime() < deadline && blocking.reason().isEmpty()) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /** Drops parked letters (their originals go back to the queue with the consumer's channel) and stops. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            parked.forEach(l -> {
                unsettled.decrementAndGet();
                l.done().completeExceptionally(new IOException("consumer stopped"));
            });
            parked.clear();
        }
        blocking.removeOnUnblocked(onUnblocked);
        dropChannel();
        settle.shutdown();
    }
}
