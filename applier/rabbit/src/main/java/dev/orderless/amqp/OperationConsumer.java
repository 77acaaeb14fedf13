package dev.orderless.amqp;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.consume.ConsumerBuilder;
import dev.orderless.consume.internal.ApplyingHandler;
import dev.orderless.consume.internal.ConsumerMetrics;
import dev.orderless.consume.internal.HandlerSettings;
import dev.orderless.consume.internal.Handling;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.broker.BrokerBlocking;
import dev.orderless.broker.QueueTopology;
import dev.orderless.broker.internal.BrokerRefusals;
import dev.orderless.history.RecordingApplier;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * N competing consumers on one queue, each applying messages with a {@link GuardedApplier}. The Spring
 * AMQP container owns the threads and the channels; acks are manual and sent only after MongoDB
 * acknowledged the write. Each delivery ends one way: an outcome (applied, superseded, duplicate, seq collision) is
 * acked; bad input, an oversized body and an operation beyond the horizon are dead-lettered with their reason; a
 * transient MongoDB failure keeps the message and retries it after a pause ({@link #retrying()}), without limit
 * while MongoDB is down and for at most {@link ConsumerOptions#maxHold()} while it serves others; stopping hands
 * back what was not settled (docs/guarantees.md).
 *
 * <pre>
 * OperationConsumer consumer = OperationConsumer.builder(connectionFactory, applier)
 *         .options(ConsumerOptions.ofDefaults("enrollment.ops").withConcurrency(4))
 *         .meters(meterRegistry)
 *         .start();
 * ...
 * consumer.close();   // in-flight messages finish, or go back to the queue
 * </pre>
 *
 * Start-up fails with {@link InvalidConfigurationException} if the broker says the queue or its dead-letter queue
 * does not exist (declare them with {@link QueueTopology}), and with a {@link dev.orderless.TransientException}
 * naming the queue if the broker did not answer normally (starting, stopping, failing over): try again.
 */
public final class OperationConsumer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OperationConsumer.class);

    private static final Duration DEAD_LETTER_CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final SimpleMessageListenerContainer container;
    private final CountDownLatch stop;
    private final ConsumerOptions options;
    private final DeadLetterPublisher deadLetters;   // null if the builder was given a recoverer
    private final BrokerBlocking ownWatcher;          // null unless this consumer made it
    private final ConsumerMetrics metrics;
    private final ApplyingHandler handler;

    private OperationConsumer(SimpleMessageListenerContainer container, CountDownLatch stop, ConsumerOptions options,
                              DeadLetterPublisher deadLetters, BrokerBlocking ownWatcher, ConsumerMetrics metrics,
                              ApplyingHandler handler) {
        this.metrics = metrics;
        this.handler = handler;
        this.container = container;
        this.stop = stop;
        this.options = options;
        this.deadLetters = deadLetters;
        this.ownWatcher = ownWatcher;
    }

    /**
     * Collects what a consumer needs; {@link Builder#start()} starts it.
     *
     * @param connectionFactory the broker: its publisher connection, if it has one, carries the dead letters
     * @param applier           applies each operation to its collection
     * @return a builder with the defaults: the canonical envelope, no meters kept, no observations, no history
     * @throws InvalidConfigurationException if either is missing
     */
    public static Builder builder(ConnectionFactory connectionFactory, GuardedApplier applier) {
        return new Builder(connectionFactory, applier);
    }

    /**
     * How it consumes.
     *
     * @return the options it was started with
     */
    public ConsumerOptions options() {
        return options;
    }

    /**
     * Whether it consumes: false once closed, or once its container stopped.
     *
     * @return true while its listener container runs
     */
    public boolean isRunning() {
        return container.isRunning();
    }

    /**
     * Messages being retried now: each failed once (MongoDB unavailable, or refusing the write for a reason of
     * configuration) and is applied again after a pause until it is applied, dead-lettered or handed back; at most
     * one per consumer thread ({@code orderless.consume.retrying}). Not every message the consumer holds unacked:
     * the broker delivers up to {@link ConsumerOptions#prefetch()} per thread, and those behind a retried message
     * wait, unacked and uncounted here (the broker's count of unacknowledged messages shows them).
     *
     * @return how many messages its threads retry now
     */
    public int retrying() {
        return metrics.retrying();
    }

    /**
     * What it waits for, while it waits: {@code MongoDB: ...} from the first apply that found MongoDB unavailable
     * (or refusing writes for a reason of configuration) until MongoDB answers again. Its messages are held
     * meanwhile, nothing is lost; it consumes, but applies nothing.
     */
    public Optional<String> waitingFor() {
        return handler.waitingFor();
    }

    /**
     * Stops consuming: messages waiting on a MongoDB retry are handed back at once; messages being applied
     * get up to {@link ConsumerOptions#shutdownTimeout()} to finish; whatever is still unacked is
     * requeued by the broker when the channels close. Dead letters already sent get up to the shutdown
     * timeout for their confirms first (so their originals are acked, not dead-lettered again later);
     * held ones are dropped, and their originals come back.
     */
    @Override
    public void close() {
        stop.countDown();
        if (deadLetters != null) {
            deadLetters.awaitConfirms(options.shutdownTimeout());
        }
        container.stop();
        container.destroy();
        if (deadLetters != null) {
            deadLetters.close();
        }
        if (ownWatcher != null) {
            ownWatcher.close();
        }
        log.info("consumer on '{}' stopped", options.queue());
    }

    /**
     * Collects the parts; {@link #start()} checks the queues and starts the consumers. The decoder, meters,
     * observations and history are set as for every orderless consumer ({@link ConsumerBuilder}).
     */
    public static final class Builder extends ConsumerBuilder<Builder> {
        private final ConnectionFactory connectionFactory;
        private ConsumerOptions options;
        private DeadLetterRecoverer recoverer;
        private BrokerBlocking blocking;
        private BrokerBlocking ownWatcher;
        private Supplier<SimpleMessageListenerContainer> containers;

        private Builder(ConnectionFactory connectionFactory, GuardedApplier applier) {
            super("consumer", applier);
            if (connectionFactory == null) {
                throw new InvalidConfigurationException("consumer: connectionFactory and applier are required");
            }
            this.connectionFactory = connectionFactory;
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * How it consumes: the queue, its dead-letter queue, the threads, prefetch and batches; required.
         *
         * @param options from {@link ConsumerOptions#ofDefaults(String)} and its {@code withX} copies
         * @return this builder
         */
        public Builder options(ConsumerOptions options) {
            this.options = options;
            return this;
        }

        /**
         * Shares a watcher of the factory's publisher connection (see {@link BrokerBlocking}); by default
         * the consumer makes its own, which learns of a block only from its start on.
         */
        public Builder brokerBlocking(BrokerBlocking blocking) {
            this.blocking = blocking;
            return this;
        }

        /**
         * Makes the listener container from a factory of the application's, so its settings and customizers
         * apply: Spring Boot's {@code rabbitListenerContainerFactory::createListenerContainer}, say (task
         * executor, error handler, recovery back-off, consumer tags, after-receive post-processors, container
         * customizers, events). The consumer then sets what it owns, whatever the factory said: the
         * connection factory, the queue, consumers, prefetch, batching, manual acks, no transactions, no
         * advice chain (it retries MongoDB itself; a retry advice would ack what was never applied) and the
         * listener. By default, a plain {@link SimpleMessageListenerContainer}.
         */
        public Builder container(Supplier<SimpleMessageListenerContainer> containers) {
            this.containers = containers;
            return this;
        }

        /** Replaces the default republish-to-DLQ recoverer. */
        public Builder recoverer(DeadLetterRecoverer recoverer) {
            this.recoverer = recoverer;
            return this;
        }

        /**
         * Checks the queues and starts the consumers.
         *
         * @return the running consumer; close it to stop
         * @throws InvalidConfigurationException if options are missing, a part is null, or the broker says the queue
         *                                       or its dead-letter queue does not exist
         * @throws dev.orderless.TransientException if the broker did not answer normally when asked for them (it
         *                                          is starting, stopping or failing over): whether they exist is
         *                                          not known; start again later
         */
        public OperationConsumer start() {
            if (options == null) {
                throw new InvalidConfigurationException("consumer: options are required, e.g. ConsumerOptions.ofDefaults(\"my.queue\")");
            }
            checkParts();
            try {
                requireQueue(options.queue());
                requireQueue(options.deadLetterQueue());
            } catch (TransientException e) {
                // said as every other failure to reach the broker is: where, what was being done, what to check
                String where = BrokerRefusals.where(connectionFactory);
                String why = e.getMessage().startsWith(where) ? e.getMessage().substring(where.length()).trim()
                        : e.getMessage();
                throw new TransientException(where + ", starting the consumer of '" + options.queue() + "': " + why, e);
            }
            CountDownLatch stop = new CountDownLatch(1);
            DeadLetterPublisher publisher = recoverer != null ? null : deadLetterPublisher();
            try {
                return start(stop, publisher);
            } catch (RuntimeException e) {
                // what this start opened closes with it: a caller that retries must not leak a connection each time
                if (publisher != null) {
                    publisher.close();
                }
                if (ownWatcher != null) {
                    ownWatcher.close();
                    ownWatcher = null;
                }
                throw e;
            }
        }

        private OperationConsumer start(CountDownLatch stop, DeadLetterPublisher publisher) {
            DeadLetterRecoverer dlq = recoverer != null ? recoverer : publisher;
            Handling handling = handling(new HandlerSettings(options.queue(), options.deadLetterQueue(),
                    options.maxMessageBytes(), options.maxHold(), options.backoff()), stop);
            ApplyingHandler handler = handling.single();
            SimpleMessageListenerContainer container = container();
            container.setBeanName("orderless-" + options.queue());
            container.setQueueNames(options.queue());
            // exactly the consumers, whatever a factory set ("2-4" scales): the container checks each setter
            // against the other's current value, so widen the maximum first
            container.setMaxConcurrentConsumers(Integer.MAX_VALUE);
            container.setConcurrentConsumers(options.concurrency());
            container.setMaxConcurrentConsumers(options.concurrency());
            container.setPrefetchCount(options.prefetch());
            container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
            container.setShutdownTimeout(options.shutdownTimeout().toMillis());
            if (options.batchSize() > 1) {
                container.setConsumerBatchEnabled(true);
                container.setBatchSize(options.batchSize());
                // both: the whole batch and each poll in it, so a lone message waits about this long, at most twice it
                container.setReceiveTimeout(options.batchReceiveTimeout().toMillis());
                container.setBatchReceiveTimeout(options.batchReceiveTimeout().toMillis());
                container.setMessageListener(ChannelListeners.batch(handling.batch(), dlq));
            } else {
                container.setConsumerBatchEnabled(false);   // a factory's batching must not meet a per-message listener
                container.setMessageListener(ChannelListeners.single(handler, dlq));
            }
            container.setDefaultRequeueRejected(true);
            container.afterPropertiesSet();
            container.start();
            log.info("consuming '{}' with {} consumers, prefetch {}, {}, dead letters to '{}'{}", options.queue(),
                    options.concurrency(), options.prefetch(), options.batchSize() > 1 ? "batches of up to "
                    + options.batchSize() : "one message at a time", options.deadLetterQueue(),
                    recordedIn().map(h -> ", recorded in '" + h.collection().getNamespace().getCollectionName() + "'")
                            .orElse(""));
            return new OperationConsumer(container, stop, options, publisher, ownWatcher, handling.metrics(), handler);
        }

        private SimpleMessageListenerContainer container() {
            if (containers == null) {
                return new SimpleMessageListenerContainer(connectionFactory);
            }
            SimpleMessageListenerContainer container = containers.get();
            if (container == null) {
                throw new InvalidConfigurationException("consumer: the container factory made no container");
            }
            container.setAdviceChain();   // a retry advice would hand back or drop what orderless must settle itself
            container.setConnectionFactory(connectionFactory);
            container.setChannelTransacted(false);
            container.setTransactionManager(null);   // an ack inside a transaction would wait for its commit
            container.setAutoStartup(false);
            return container;
        }

        /**
         * Dead letters go out on the factory's publisher connection: while RabbitMQ blocks publishers
         * (a resource alarm), a connection that also consumed would stop acking too.
         */
        private DeadLetterPublisher deadLetterPublisher() {
            ConnectionFactory publishing = connectionFactory.getPublisherConnectionFactory();
            if (publishing == null) {
                log.warn("the connection factory has no separate publisher connection; dead letters share the"
                        + " consumers' connection, and a RabbitMQ resource alarm will stop their acks: use a"
                        + " CachingConnectionFactory");
                publishing = connectionFactory;
            }
            BrokerBlocking watcher = blocking;
            if (watcher == null) {
                ownWatcher = BrokerBlocking.watch(publishing, meterRegistry(), "dead-letters-" + options.queue());
                watcher = ownWatcher;
            }
            return new DeadLetterPublisher(publishing, watcher, options.queue(), options.deadLetterQueue(),
                    DEAD_LETTER_CONFIRM_TIMEOUT, meterRegistry());
        }

        /** Missing only if the broker says so: a broker starting or failing over leaves it unknown (transient). */
        private void requireQueue(String queue) {
            if (QueueTopology.lookup(connectionFactory, queue).isEmpty()) {
                throw new InvalidConfigurationException("consumer: queue '" + queue + "' does not exist; declare it"
                        + " (and its dead-letter queue) with QueueTopology.declare(connectionFactory, \"" + options.queue()
                        + "\", \"" + options.deadLetterQueue() + "\")");
            }
        }
    }
}
