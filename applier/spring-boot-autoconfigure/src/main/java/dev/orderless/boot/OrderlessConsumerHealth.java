package dev.orderless.boot;

import java.util.Optional;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code UP} while the consumer consumes and applies, {@code DOWN} otherwise (not started, stopped, waiting for
 * the broker or for MongoDB, or its container gave up); details: the queue, the dead-letter queue, how many messages wait
 * there, how many messages are being retried after a transient failure ({@code retrying}: at most one
 * per consumer thread, not the prefetched deliveries behind them), and what it waits for.
 */
final class OrderlessConsumerHealth implements HealthIndicator {
    private final OrderlessConsumer consumer;

    OrderlessConsumerHealth(OrderlessConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public Health health() {
        Optional<String> waitingFor = consumer.waitingFor();
        Health.Builder health = consumer.isConsuming() && waitingFor.isEmpty() ? Health.up() : Health.down();
        waitingFor.ifPresent(why -> health.withDetail("waitingFor", why));
        health.withDetail("queue", consumer.options().queue())
                .withDetail("protocol", consumer.protocol() == OrderlessProperties.Protocol.AMQP_1_0 ? "amqp-1.0"
                        : "amqp-0-9-1")
                .withDetail("concurrency", consumer.options().concurrency())
                .withDetail("batchSize", consumer.options().batchSize())
                .withDetail("deadLetterQueue", consumer.options().deadLetterQueue())
                .withDetail("retrying", consumer.retrying());
        consumer.deadLetterDepth().ifPresent(depth -> health.withDetail("deadLetters", depth));
        return health.build();
    }
}
