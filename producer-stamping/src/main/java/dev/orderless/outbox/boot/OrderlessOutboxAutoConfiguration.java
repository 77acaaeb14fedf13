package dev.orderless.outbox.boot;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.outbox.Outbox;
import dev.orderless.outbox.OutboxRelay;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.stamp.Stamper;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.bson.BsonDocument;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The outbox in a Spring Boot 4 application, with {@code orderless.outbox.enabled=true}: an {@link Outbox}
 * bean that a controller calls instead of publishing (stamping with the application's {@link Stamper}, or
 * counters in {@code orderless.publisher.counters}), and, where the publisher is configured
 * ({@code orderless.publisher.*}), a relay started with the context ({@code orderless.outbox.relay.enabled=false}
 * to run relays elsewhere) and its health ({@code orderlessoutbox}: UP with the backlog, its oldest entry's age
 * and the relay's state; DOWN when the outbox is full, as {@code record} then refuses).
 */
@AutoConfiguration(afterName = "dev.orderless.publish.boot.OrderlessPublisherAutoConfiguration")
@ConditionalOnClass(MongoClient.class)
@ConditionalOnSingleCandidate(MongoClient.class)
@ConditionalOnProperty(prefix = "orderless.outbox", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(OrderlessProperties.class)
public class OrderlessOutboxAutoConfiguration {

    static MongoCollection<BsonDocument> entries(MongoClient client, OrderlessProperties properties) {
        return client.getDatabase(properties.database()).getCollection(properties.outbox().collection(),
                BsonDocument.class);
    }

    @Bean
    @ConditionalOnMissingBean
    Outbox orderlessOutbox(MongoClient client, OrderlessProperties properties, ObjectProvider<Stamper> stampers, ObjectProvider<MeterRegistry> meters) {
        Stamper stamper = stampers.getIfAvailable(() -> MongoCounterStamper.create(client.getDatabase(properties.database())
                .getCollection(properties.publisher().counters(), BsonDocument.class)));
        return Outbox.create(entries(client, properties), stamper,
                OutboxSettings.outboxOptions(properties.outbox()).withMeters(meters.getIfAvailable(SimpleMeterRegistry::new)));
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(ConfirmingPublisher.class)
    @ConditionalOnProperty(prefix = "orderless.outbox.relay", name = "enabled", matchIfMissing = true)
    OrderlessOutboxRelay orderlessOutboxRelay(MongoClient client, OrderlessProperties properties,
                                              ConfirmingPublisher publisher, ObjectProvider<MeterRegistry> meters) {
        return new OrderlessOutboxRelay(entries(client, properties), publisher,
                OutboxSettings.relayOptions(properties.outbox()).withMeters(meters.getIfAvailable(SimpleMeterRegistry::new)));
    }

    /** Health, where Spring Boot's health support is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class OutboxHealth {
        @Bean
        @ConditionalOnMissingBean(name = "orderlessOutboxHealthIndicator")
        HealthIndicator orderlessOutboxHealthIndicator(Outbox outbox, OrderlessProperties properties,
                                                       ObjectProvider<OrderlessOutboxRelay> relays) {
            long limit = OutboxSettings.outboxOptions(properties.outbox()).maxBacklog();
            return () -> {
                long backlog = outbox.backlog();
                Health.Builder health = backlog >= limit ? Health.down() : Health.up();
                health.withDetail("outbox", outbox.name()).withDetail("backlog", backlog).withDetail("limit", limit);
                OrderlessOutboxRelay lifecycle = relays.getIfAvailable();
                java.util.Optional<OutboxRelay> running = lifecycle == null ? java.util.Optional.empty() : lifecycle.relay();
                running.ifPresentOrElse(relay -> {
                    health.withDetail("relay", relay.state().name());
                    relay.problem().ifPresent(p -> health.withDetail("problem", p));
                    relay.oldest().ifPresent(age -> health.withDetail("oldestSeconds", age.toSeconds()));
                }, () -> health.withDetail("relay", OutboxRelay.State.STOPPED.name()));
                return health.build();
            };
        }
    }
}
