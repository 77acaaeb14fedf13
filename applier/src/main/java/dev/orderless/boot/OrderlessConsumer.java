package dev.orderless.boot;

import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.GuardedApplier;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.context.SmartLifecycle;

/**
 * The {@link OperationConsumer} as a Spring bean: started after every other bean (the queues are
 * declared by then), stopped before them, so messages in flight finish while MongoDB and the connection
 * factory are still there. Built on the application's own {@link ConnectionFactory}.
 */
public final class OrderlessConsumer implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(OrderlessConsumer.class);

    private final ConnectionFactory connectionFactory;
    private final GuardedApplier applier;
    private final ConsumerOptions options;
    private final MeterRegistry meters;
    private volatile Optional<OperationConsumer> running = Optional.empty();

    public OrderlessConsumer(ConnectionFactory connectionFactory, GuardedApplier applier, ConsumerOptions options,
                             MeterRegistry meters) {
        this.connectionFactory = connectionFactory;
        this.applier = applier;
        this.options = options;
        this.meters = meters;
    }

    public ConsumerOptions options() {
        return options;
    }

    @Override
    public synchronized void start() {
        if (running.isEmpty()) {
            running = Optional.of(OperationConsumer.builder(connectionFactory, applier).options(options).meters(meters)
                    .start());
        }
    }

    @Override
    public synchronized void stop() {
        running.ifPresent(OperationConsumer::close);
        running = Optional.empty();
    }

    /** True while its listener container consumes. */
    @Override
    public boolean isRunning() {
        return running.map(OperationConsumer::isRunning).orElse(false);
    }

    /** Messages waiting in the dead-letter queue, if the broker answers. */
    public OptionalLong deadLetterDepth() {
        try {
            QueueInformation info = new RabbitAdmin(connectionFactory).getQueueInfo(options.deadLetterQueue());
            return info == null ? OptionalLong.empty() : OptionalLong.of(info.getMessageCount());
        } catch (RuntimeException e) {
            log.debug("dead-letter queue '{}' depth unknown: {}", options.deadLetterQueue(), e.toString());
            return OptionalLong.empty();
        }
    }
}
