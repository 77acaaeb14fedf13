package dev.orderless.kafka.boot;

import java.util.Optional;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code UP} while every consumer thread consumes and applies, {@code DOWN} otherwise (not started, stopped, a consumer
 * thread ended, waiting for Kafka or for MongoDB), with what it waits for ({@code waitingFor}, naming the topic where
 * its consumers stopped); details: the topic, the share group, the dead-letter topic, the consumers, the records per
 * poll, the records held after a transient failure ({@code retrying}) and the broker's delivery count limit.
 */
final class OrderlessKafkaHealth implements HealthIndicator {
    private final OrderlessKafkaConsumer consumer;

    OrderlessKafkaHealth(OrderlessKafkaConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public Health health() {
        Optional<String> waitingFor = consumer.waitingFor();
        Health.Builder health = consumer.isConsuming() && waitingFor.isEmpty() ? Health.up() : Health.down();
        waitingFor.ifPresent(why -> health.withDetail("waitingFor", why));
        health.withDetail("topic", consumer.options().topic())
                .withDetail("group", consumer.options().group())
                .withDetail("deadLetterTopic", consumer.options().deadLetterTopic())
                .withDetail("concurrency", consumer.options().concurrency())
                .withDetail("maxPollRecords", consumer.options().maxPollRecords())
                .withDetail("retrying", consumer.retrying());
        consumer.deliveryCountLimit().ifPresent(limit -> health.withDetail("deliveryCountLimit", limit));
        return health.build();
    }
}
