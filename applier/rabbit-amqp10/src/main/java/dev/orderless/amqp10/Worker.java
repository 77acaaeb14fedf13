package dev.orderless.amqp10;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Resource;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.consume.internal.ApplyingHandler;
import dev.orderless.consume.internal.BatchApplyingHandler;
import dev.orderless.consume.internal.Handling;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the consumer's N: a link to the queue with {@link ConsumerOptions#prefetch()} credits, and a thread of
 * its own that applies what the link delivered. The client's dispatcher only hands each delivery over (it must
 * never wait on MongoDB: other links share it); the thread takes up to {@link ConsumerOptions#batchSize()} at a
 * time, waiting at most {@link ConsumerOptions#batchReceiveTimeout()} for a batch to fill, and settles each
 * through the {@link ApplyingHandler}. The client grants new credits as deliveries are settled, so a worker
 * never holds more than its prefetch.
 *
 * <p>Its thread catches whatever a batch throws: the batch's unsettled deliveries go back to the queue, an
 * ERROR line names the queue, and the thread goes on. If the thread ends anyway (an {@link Error}), it says so,
 * and {@link #alive()} turns false, so the consumer no longer reports running.
 */
final class Worker {
    private static final Logger log = LoggerFactory.getLogger(Worker.class);
    private static final long IDLE_POLL_MILLIS = 100;

    /** A delivery as the client handed it over, and the link's generation then. */
    private record Received(Consumer.Context context, Message message, int generation) {
    }

    private final ConsumerOptions options;
    private final ApplyingHandler single;
    private final BatchApplyingHandler batch;
    private final Clock clock;
    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final Consumer link;
    private final Thread thread;
    private volatile boolean stopping;
    /** What the client says of the link: recovering after a cut, or closed for good. */
    private volatile Resource.State linkState = Resource.State.OPENING;
    /**
     * One more each time the link is lost (recovering or closed). A delivery of an earlier generation can no longer
     * be settled: the broker put it back when the link went, and the client drops such a settlement without a word,
     * so {@link ContextDelivery} refuses it first and the apply logic counts it as not settled.
     */
    private final java.util.concurrent.atomic.AtomicInteger generation = new java.util.concurrent.atomic.AtomicInteger();

    Worker(Connection connection, ConsumerOptions options, Handling handling, int index, Clock clock) {
        this.options = options;
        this.single = handling.single();
        this.batch = handling.batch();
        this.clock = clock;
        this.thread = new Thread(this::run, "orderless-amqp10-" + options.queue() + "-" + index);
        this.link = connection.consumerBuilder()
                .queue(options.queue())
                .initialCredits(options.prefetch())
                .messageHandler((context, message) -> received.add(new Received(context, message, generation.get())))
                .listeners(this::linkChanged)
                .build();
        thread.start();
    }

    /** Consuming, or recovering by itself: its thread runs, and the client has not given the link up. */
    boolean alive() {
        return thread.isAlive() && !stopping && linkState != Resource.State.CLOSED;
    }

    private void linkChanged(Resource.Context change) {
        if (change.currentState() == Resource.State.RECOVERING || change.currentState() == Resource.State.CLOSED) {
            generation.incrementAndGet();
            received.clear();   // back in the queue already: the broker released them with the link
        }
        linkState = change.currentState();
        if (change.currentState() == Resource.State.CLOSED && !stopping) {
            log.error("AMQP 1.0 consumer of '{}': the client closed {}'s link ({}); it no longer consumes",
                    options.queue(), thread.getName(), change.failureCause() == null ? "no cause given"
                    : change.failureCause().toString());
        } else if (change.currentState() == Resource.State.RECOVERING) {
            log.warn("AMQP 1.0 consumer of '{}': {}'s link is recovering ({}); its unsettled messages go back to the"
                    + " queue", options.queue(), thread.getName(), String.valueOf(change.failureCause()));
        }
    }

    /** Asks the thread to stop after what it is applying (a pause for MongoDB ends at once: the consumer's stop signal). */
    void signalStop() {
        stopping = true;
    }

    /**
     * Waits for the thread up to {@code timeoutMillis} and hands back whatever it still held; {@link #closeLink()}
     * then closes the link (the broker puts back anything else unsettled). Nothing here waits on the broker's
     * answer: on a connection that died, asking the broker to pause the link would wait for an echo that never
     * comes.
     */
    void finish(long timeoutMillis) {
        signalStop();
        try {
            thread.join(timeoutMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("AMQP 1.0 consumer of '{}': {} still applying after {} ms; its deliveries go back to the queue"
                    + " when the link closes", options.queue(), thread.getName(), timeoutMillis);
            thread.interrupt();
        }
        for (Received r = received.poll(); r != null; r = received.poll()) {
            delivery(r).requeueIfUnsettled();
        }
    }

    /**
     * Closes the link. The client waits for the broker's detach (up to a minute on a connection that stopped
     * answering), so {@link Amqp10Consumer#close()} closes the links side by side, each on a thread of its own.
     */
    void closeLink() {
        try {
            link.close();
        } catch (RuntimeException e) {
            log.debug("closing the link of {}: {}", thread.getName(), e.toString());
        }
    }

    String name() {
        return thread.getName();
    }

    private void run() {
        try {
            while (!stopping) {
                Received first = received.poll(IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
                if (first != null && !stopping) {
                    handle(take(first));
                } else if (first != null) {
                    delivery(first).requeueIfUnsettled();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Error e) {
            log.error("AMQP 1.0 consumer of '{}': {} ended on {}; it no longer consumes (its deliveries go back to"
                    + " the queue when the link closes)", options.queue(), thread.getName(), e.toString(), e);
            throw e;
        }
    }

    /** {@code first} and what else arrives, up to a batch, within the batch receive timeout. */
    private List<ContextDelivery> take(Received first) throws InterruptedException {
        List<ContextDelivery> deliveries = new ArrayList<>(options.batchSize());
        deliveries.add(delivery(first));
        long deadline = System.nanoTime() + options.batchReceiveTimeout().toNanos();
        while (deliveries.size() < options.batchSize()) {
            Received next = received.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (next == null) {
                break;
            }
            deliveries.add(delivery(next));
        }
        return deliveries;
    }

    private void handle(List<ContextDelivery> deliveries) {
        try {
            if (options.batchSize() > 1) {
                batch.handle(deliveries);
            } else {
                single.handle(deliveries.get(0));   // batch size 1 takes one at a time
            }
        } catch (Exception e) {
            log.error("AMQP 1.0 consumer of '{}': a batch of {} failed unexpectedly ({}); what it had not settled goes"
                    + " back to the queue as failed (towards its delivery limit)", options.queue(), deliveries.size(),
                    e.toString(), e);
            deliveries.forEach(ContextDelivery::failIfUnsettled);
            try {
                Thread.sleep(options.backoff().pause(1).toMillis());   // not a redelivery loop at full speed
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private ContextDelivery delivery(Received r) {
        return new ContextDelivery(r.context(), r.message(), options.queue(), clock,
                () -> r.generation() == generation.get());
    }
}
