package dev.orderless.amqp;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.message.Envelope;
import dev.orderless.message.OperationDecoder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * N competing consumers on one queue, each applying messages with a {@link GuardedApplier}. The Spring
 * AMQP container owns the threads and the channels; acks are manual and sent only after MongoDB
 * acknowledged the write (see {@link ApplyingListener} for what happens to each delivery).
 *
 * <pre>
 * OperationConsumer consumer = OperationConsumer.builder(connectionFactory, applier)
 *         .options(ConsumerOptions.ofDefaults("enrollment.ops").withConsumers(4))
 *         .meters(meterRegistry)
 *         .start();
 * ...
 * consumer.close();   // in-flight messages finish, or go back to the queue
 * </pre>
 *
 * Start-up fails with {@link InvalidConfigurationException} if the queue or its dead-letter queue does
 * not exist (declare them with {@link QueueTopology}).
 */
public final class OperationConsumer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OperationConsumer.class);

    private final SimpleMessageListenerContainer container;
    private final CountDownLatch stop;
    private final ConsumerOptions options;

    private OperationConsumer(SimpleMessageListenerContainer container, CountDownLatch stop, ConsumerOptions options) {
        this.container = container;
        this.stop = stop;
        this.options = options;
    }

    public static Builder builder(ConnectionFactory connectionFactory, GuardedApplier applier) {
        return new Builder(connectionFactory, applier);
    }

    public ConsumerOptions options() {
        return options;
    }

    public boolean isRunning() {
        return container.isRunning();
    }

    /**
     * Stops consuming: messages waiting on a MongoDB retry are handed back at once; messages being applied
     * get up to {@link ConsumerOptions#shutdownTimeout()} to finish; whatever is still unacked is
     * requeued by the broker when the channels close.
     */
    @Override
    public void close() {
        stop.countDown();
        container.stop();
        container.destroy();
        log.info("consumer on '{}' stopped", options.queue());
    }

    /** Collects the parts; {@link #start()} checks the queues and starts the consumers. */
    public static final class Builder {
        private final ConnectionFactory connectionFactory;
        private final GuardedApplier applier;
        private OperationDecoder decoder = new Envelope();
        private ConsumerOptions options;
        private MeterRegistry meters = new SimpleMeterRegistry();
        private DeadLetterRecoverer recoverer;

        private Builder(ConnectionFactory connectionFactory, GuardedApplier applier) {
            if (connectionFactory == null || applier == null) {
                throw new InvalidConfigurationException("consumer: connectionFactory and applier are required");
            }
            this.connectionFactory = connectionFactory;
            this.applier = applier;
        }

        /** How bodies become operations; the canonical {@link Envelope} by default. */
        public Builder decoder(OperationDecoder decoder) {
            this.decoder = decoder;
            return this;
        }

        public Builder options(ConsumerOptions options) {
            this.options = options;
            return this;
        }

        public Builder meters(MeterRegistry meters) {
            this.meters = meters;
            return this;
        }

        /** Replaces the default republish-to-DLQ recoverer. */
        public Builder recoverer(DeadLetterRecoverer recoverer) {
            this.recoverer = recoverer;
            return this;
        }

        public OperationConsumer start() {
            if (options == null) {
                throw new InvalidConfigurationException("consumer: options are required, e.g. ConsumerOptions.ofDefaults(\"my.queue\")");
            }
            if (decoder == null || meters == null) {
                throw new InvalidConfigurationException("consumer: decoder and meters must not be null");
            }
            requireQueue(options.queue());
            requireQueue(options.deadLetterQueue());
            CountDownLatch stop = new CountDownLatch(1);
            DeadLetterRecoverer dlq = recoverer != null ? recoverer
                    : new RepublishingRecoverer(options.queue(), options.deadLetterQueue(), 10_000);
            ApplyingListener listener = new ApplyingListener(applier, decoder, dlq, options,
                    new ConsumerMetrics(meters, options.queue()), new Backoff(options.retryInitial(), options.retryMax(), stop));
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connectionFactory);
            container.setBeanName("orderless-" + options.queue());
            container.setQueueNames(options.queue());
            container.setConcurrentConsumers(options.consumers());
            container.setPrefetchCount(options.prefetch());
            container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
            container.setShutdownTimeout(options.shutdownTimeout().toMillis());
            container.setMessageListener(listener);
            container.setDefaultRequeueRejected(true);
            container.afterPropertiesSet();
            container.start();
            log.info("consuming '{}' with {} consumers, prefetch {}, dead letters to '{}'", options.queue(),
                    options.consumers(), options.prefetch(), options.deadLetterQueue());
            return new OperationConsumer(container, stop, options);
        }

        private void requireQueue(String queue) {
            if (new RabbitAdmin(connectionFactory).getQueueProperties(queue) == null) {
                throw new InvalidConfigurationException("consumer: queue '" + queue + "' does not exist; declare it"
                        + " (and its dead-letter queue) with QueueTopology.declare(connectionFactory, \"" + options.queue()
                        + "\", \"" + options.deadLetterQueue() + "\")");
            }
        }
    }
}
