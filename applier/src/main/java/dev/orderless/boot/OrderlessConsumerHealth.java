package dev.orderless.boot;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code UP} while the consumer consumes, {@code DOWN} otherwise (not started, stopped, or its container
 * gave up); details: the queue, the dead-letter queue and how many messages wait there.
 */
final class OrderlessConsumerHealth implements HealthIndicator {
    private final OrderlessConsumer consumer;

    OrderlessConsumerHealth(OrderlessConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public Health health() {
        Health.Builder health = consumer.isRunning() ? Health.up() : Health.down();
        health.withDetail("queue", consumer.options().queue())
                .withDetail("consumers", consumer.options().consumers())
                .withDetail("batchSize", consumer.options().batchSize())
                .withDetail("deadLetterQueue", consumer.options().deadLetterQueue());
        consumer.deadLetterDepth().ifPresent(depth -> health.withDetail("deadLetters", depth));
        return health.build();
    }
}
