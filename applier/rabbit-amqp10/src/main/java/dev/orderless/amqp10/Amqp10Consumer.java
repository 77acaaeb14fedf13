package dev.orderless.amqp10;

import com.rabbitmq.client.amqp.AmqpException;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Management;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.consume.ConsumerBuilder;
import dev.orderless.consume.internal.ApplyingHandler;
import dev.orderless.consume.internal.ConsumerMetrics;
import dev.orderless.consume.internal.HandlerSettings;
import dev.orderless.consume.internal.Handling;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.broker.QueueTopology;
import dev.orderless.history.RecordingApplier;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * N competing consumers on one RabbitMQ 4 quorum queue over AMQP 1.0, each applying with a
 * {@link GuardedApplier}: the same guarantees and outcomes as the AMQP 0-9-1
 * {@link dev.orderless.amqp.OperationConsumer} (batched guarded apply, a message accepted only after MongoDB
 * acknowledged its write, back-off through outages, a bounded hold while MongoDB serves others, and the same
 * metrics), with one difference: a message that can never be applied is dead-lettered by the broker, which
 * moves it to the dead-letter queue with the reason as message annotations ({@code x-opt-orderless-reason},
 * {@code -reason-kind}, {@code -original-queue}, {@code -dead-lettered-at}) when the consumer settles it as
 * {@code modified}, delivery failed and undeliverable here. There is no republish to be cut from its ack: a consumer that dies at any
 * point leaves a poison message dead-lettered exactly once, or back in its queue to be dead-lettered later.
 *
 * <pre>
 * Environment environment = new AmqpEnvironmentBuilder().build();
 * Connection connection = environment.connectionBuilder().uri("amqp://guest:guest@localhost:5672/%2F").build();
 * Amqp10Consumer consumer = Amqp10Consumer.builder(connection, applier)
 *         .options(ConsumerOptions.ofDefaults("enrollment.ops").withConcurrency(4))
 *         .start();
 * ...
 * consumer.close();   // in-flight messages finish, or go back to the queue; the connection stays the caller's
 * </pre>
 *
 * Start-up fails with {@link InvalidConfigurationException} if the queue or its dead-letter queue does not
 * exist, if the queue is not a quorum queue (only a quorum queue keeps the consumer's annotations on a dead
 * letter), or if it does not dead-letter to the dead-letter queue: declare both with {@link QueueTopology}.
 * Each of the N holds up to {@link ConsumerOptions#prefetch()} messages (its link's credits) and applies on a
 * thread of its own.
 */
public final class Amqp10Consumer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Amqp10Consumer.class);
    static final String DEAD_LETTER_EXCHANGE = "x-dead-letter-exchange";
    static final String DEAD_LETTER_ROUTING_KEY = "x-dead-letter-routing-key";
    /** What closing the links may take beyond {@link ConsumerOptions#shutdownTimeout()}: a broker answers in ms. */
    private static final long LINK_CLOSE_MILLIS = 2_000;

    private final ConsumerOptions options;
    private final List<Worker> workers;
    private final CountDownLatch stop;
    private final ConsumerMetrics metrics;
    private final ApplyingHandler handler;
    private volatile boolean closed;

    private Amqp10Consumer(ConsumerOptions options, List<Worker> workers, CountDownLatch stop, ConsumerMetrics metrics,
                           ApplyingHandler handler) {
        this.handler = handler;
        this.options = options;
        this.workers = workers;
        this.stop = stop;
        this.metrics = metrics;
    }

    /** A consumer on {@code connection} (the caller's: opened, recovered and closed by it). */
    public static Builder builder(Connection connection, GuardedApplier applier) {
        return new Builder(connection, applier);
    }

    /**
     * How it consumes.
     *
     * @return the options it was started with
     */
    public ConsumerOptions options() {
        return options;
    }

    /** True while every one of the N is consuming: false once closed, or if a consumer thread ended. */
    public boolean isRunning() {
        return !closed && workers.stream().allMatch(Worker::alive);
    }

    /**
     * Messages being retried now: each failed once (MongoDB unavailable, or refusing the write for a reason of
     * configuration) and is applied again after a pause until it is applied, dead-lettered or handed back; at most
     * one per consumer thread ({@code orderless.consume.retrying}), as {@code OperationConsumer.retrying()} counts.
     * Not every message the consumer holds unsettled: the broker grants each thread up to
     * {@link ConsumerOptions#prefetch()} messages as credit, and those behind a retried message wait, unsettled and
     * uncounted here.
     *
     * @return how many messages its threads retry now
     */
    public int retrying() {
        return metrics.retrying();
    }

    /**
     * What it waits for, while it waits: {@code MongoDB: ...} from the first apply that found MongoDB unavailable
     * until MongoDB answers again; its messages are held meanwhile, nothing is lost.
     */
    public java.util.Optional<String> waitingFor() {
        return handler.waitingFor();
    }

    /**
     * Stops consuming: messages waiting on a MongoDB retry are handed back at once; messages being applied get
     * up to {@link ConsumerOptions#shutdownTimeout()} to finish; whatever is still unsettled goes back to the
     * queue. The connection stays open.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop.countDown();
        workers.forEach(Worker::signalStop);
        long deadline = System.nanoTime() + options.shutdownTimeout().toNanos();
        for (Worker worker : workers) {
            worker.finish(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        }
        closeLinks(options.queue(), workers, Math.max(LINK_CLOSE_MILLIS, (deadline - System.nanoTime()) / 1_000_000));
        log.info("AMQP 1.0 consumer on '{}' stopped", options.queue());
    }

    /**
     * Closes every link side by side and waits for them up to {@code timeoutMillis}: a link whose broker does not
     * answer is left to its connection (closing it puts back whatever it held), not waited on for a minute each.
     */
    private static void closeLinks(String queue, List<Worker> workers, long timeoutMillis) {
        List<Thread> closing = new ArrayList<>();
        for (Worker worker : workers) {
            Thread thread = new Thread(worker::closeLink, worker.name() + "-close");
            thread.setDaemon(true);
            thread.start();
            closing.add(thread);
        }
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        for (Thread thread : closing) {
            try {
                thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (thread.isAlive()) {
                log.warn("AMQP 1.0 consumer on '{}': {} did not close within {} ms (the broker does not answer); closing"
                        + " the connection puts back what it held", queue, thread.getName(), timeoutMillis);
            }
        }
    }

    /**
     * Collects the parts; {@link #start()} checks the queues and starts the consumers. The decoder, meters
     * ({@code orderless.consume.*}, as the AMQP 0-9-1 consumer's), observations and history are set as for every
     * orderless consumer ({@link ConsumerBuilder}).
     */
    public static final class Builder extends ConsumerBuilder<Builder> {
        private final Connection connection;
        private ConsumerOptions options;

        private Builder(Connection connection, GuardedApplier applier) {
            super("AMQP 1.0 consumer", applier);
            if (connection == null) {
                throw new InvalidConfigurationException("AMQP 1.0 consumer: connection and applier are required");
            }
            this.connection = connection;
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * How it consumes: the queue, its dead-letter queue, the threads, prefetch (each link's credits) and
         * batches; required.
         *
         * @param options from {@link ConsumerOptions#ofDefaults(String)} and its {@code withX} copies
         * @return this builder
         */
        public Builder options(ConsumerOptions options) {
            this.options = options;
            return this;
        }

        /**
         * Checks the queues and opens one link and one thread per consumer.
         *
         * @return the running consumer; close it to stop
         * @throws InvalidConfigurationException if options are missing, a part is null, or the queue or its
         *                                       dead-letter queue does not exist, is not a quorum queue or does not
         *                                       dead-letter to it
         */
        public Amqp10Consumer start() {
            if (options == null) {
                throw new InvalidConfigurationException("AMQP 1.0 consumer: options are required, e.g."
                        + " ConsumerOptions.ofDefaults(\"my.queue\")");
            }
            checkParts();
            requireDeadLettering(connection.management(), options);
            CountDownLatch stop = new CountDownLatch(1);
            Handling handling = handling(new HandlerSettings(options.queue(), options.deadLetterQueue(),
                    options.maxMessageBytes(), options.maxHold(), options.backoff()), stop);
            List<Worker> workers = new ArrayList<>();
            try {
                for (int i = 0; i < options.concurrency(); i++) {
                    workers.add(new Worker(connection, options, handling, i, Clock.systemUTC()));
                }
            } catch (RuntimeException e) {
                stop.countDown();
                workers.forEach(Worker::signalStop);
                workers.forEach(w -> w.finish(options.shutdownTimeout().toMillis()));
                closeLinks(options.queue(), workers, LINK_CLOSE_MILLIS);
                throw e;
            }
            log.info("consuming '{}' over AMQP 1.0 with {} consumers, prefetch {}, {}, dead-lettered by the broker to"
                    + " '{}'{}", options.queue(), options.concurrency(), options.prefetch(), options.batchSize() > 1
                    ? "batches of up to " + options.batchSize() : "one message at a time", options.deadLetterQueue(),
                    recordedIn().map(h -> ", recorded in '" + h.collection().getNamespace().getCollectionName() + "'")
                            .orElse(""));
            return new Amqp10Consumer(options, workers, stop, handling.metrics(), handling.single());
        }
    }

    /**
     * The queue must be a quorum queue that dead-letters to the dead-letter queue, which must exist: only then
     * does a discarded message reach it with the consumer's annotations. The arguments are what is checked; a
     * policy that sets them is not visible to a client.
     */
    static void requireDeadLettering(Management management, ConsumerOptions options) {
        String queue = options.queue();
        String dlq = options.deadLetterQueue();
        String declare = "declare both with QueueTopology.declare(connectionFactory, \"" + queue + "\", \"" + dlq
                + "\")";
        Management.QueueInfo info = queueInfo(management, queue, declare);
        queueInfo(management, dlq, declare);
        if (info.type() != Management.QueueType.QUORUM) {
            throw new InvalidConfigurationException("AMQP 1.0 consumer: queue '" + queue + "' is a " + info.type()
                    + " queue; the AMQP 1.0 consumer needs a quorum queue, the only kind that dead-letters with the"
                    + " consumer's reason (RabbitMQ's modified outcome): " + declare);
        }
        Map<String, Object> arguments = info.arguments();
        Object exchange = arguments.get(DEAD_LETTER_EXCHANGE);
        Object routingKey = arguments.get(DEAD_LETTER_ROUTING_KEY);
        if (!"".equals(String.valueOf(exchange)) || !dlq.equals(String.valueOf(routingKey))) {
            throw new InvalidConfigurationException("AMQP 1.0 consumer: queue '" + queue + "' does not dead-letter to '"
                    + dlq + "' (its " + DEAD_LETTER_EXCHANGE + " is " + describe(exchange) + ", its "
                    + DEAD_LETTER_ROUTING_KEY + " " + describe(routingKey) + "), so the broker would drop what the"
                    + " consumer dead-letters; " + declare);
        }
    }

    private static Management.QueueInfo queueInfo(Management management, String queue, String declare) {
        try {
            return management.queueInfo(queue);
        } catch (AmqpException.AmqpEntityDoesNotExistException e) {
            throw new InvalidConfigurationException("AMQP 1.0 consumer: queue '" + queue + "' does not exist; "
                    + declare, e);
        }
    }

    private static String describe(Object value) {
        return value == null ? "not set" : "'" + value + "'";
    }
}
