package dev.orderless.outbox.boot;

import dev.orderless.outbox.RelayOptions;

import dev.orderless.InvalidConfigurationException;

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
import java.time.Duration;
import java.util.Optional;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The outbox in a Spring Boot 4 application, with {@code orderless.outbox.enabled=true}: an {@link Outbox}
 * bean that a controller calls instead of publishing (stamping with the application's {@link Stamper}, or
 * counters in {@code orderless.publisher.counters}), and, where the publisher is configured
 * ({@code orderless.publisher.*}), a relay started with the context ({@code orderless.outbox.relay.enabled=false}
 * to run relays elsewhere) and its health ({@code orderlessOutbox}, switched off by
 * {@code management.health.orderlessoutbox.enabled=false}): UP with the backlog, the parked entries, the
 * oldest waiting entry's age and the relay's state; DOWN when the outbox is full (as {@code record} then
 * refuses), when the oldest waiting entry has waited {@code orderless.outbox.max-wait} (by default half
 * of {@code orderless.compaction.grace}: past the grace an action may arrive beyond the horizon), or when
 * the relay here has FAILED. A max-wait that is not shorter than the grace fails the start.
 */
@AutoConfiguration(afterName = "dev.orderless.publish.boot.OrderlessPublisherAutoConfiguration")
@ConditionalOnClass(value = MongoClient.class, name = "dev.orderless.outbox.Outbox")   // orderless-producer-stamping is optional here
@ConditionalOnSingleCandidate(MongoClient.class)
@ConditionalOnProperty(prefix = "orderless.outbox", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(OrderlessProperties.class)
public class OrderlessOutboxAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(OrderlessOutboxAutoConfiguration.class);

    static MongoCollection<BsonDocument> entries(MongoClient client, OrderlessProperties properties) {
        return properties.database(client).getCollection(properties.outbox().collection(),
                BsonDocument.class);
    }

    @Bean
    @ConditionalOnMissingBean
    Outbox orderlessOutbox(MongoClient client, OrderlessProperties properties, ObjectProvider<Stamper> stampers, ObjectProvider<MeterRegistry> meters) {
        if (properties.outboxMaxWait().isEmpty()) {
            log.info("orderless.outbox: orderless.compaction.grace is not set in this application, so how long an"
                    + " action may wait in the outbox cannot be checked against it; set orderless.outbox.max-wait below"
                    + " the grace of the consumers' collection to have the outbox health say so");
        }
        Stamper stamper = stampers.getIfAvailable(() -> MongoCounterStamper.create(properties.database(client)
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
        RelayOptions options = OutboxSettings.relayOptions(properties.outbox());
        if (options.batch() > publisher.options().window()) {
            // checked here too, to name the properties: the relay itself names its options
            throw new InvalidConfigurationException("orderless.outbox.relay.batch (" + options.batch() + ") must be at"
                    + " most orderless.publisher.window (" + publisher.options().window() + "): one confirm window per"
                    + " batch; lower the batch or raise the window");
        }
        return new OrderlessOutboxRelay(entries(client, properties), publisher,
                options.withMeters(meters.getIfAvailable(SimpleMeterRegistry::new)));
    }

    /** Health, where Spring Boot's health support is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnEnabledHealthIndicator("orderlessoutbox")   // management.health.orderlessoutbox.enabled
    static class OutboxHealth {
        @Bean
        @ConditionalOnMissingBean(name = "orderlessOutboxHealthIndicator")
        HealthIndicator orderlessOutboxHealthIndicator(Outbox outbox, OrderlessProperties properties,
                                                       ObjectProvider<OrderlessOutboxRelay> relays) {
            long limit = OutboxSettings.outboxOptions(properties.outbox()).maxBacklog();
            Optional<Duration> maxWait = properties.outboxMaxWait();
            return () -> {
                long backlog = outbox.backlog();
                Optional<Duration> oldest = outbox.oldest();
                OrderlessOutboxRelay lifecycle = relays.getIfAvailable();
                Optional<OutboxRelay> running = lifecycle == null ? Optional.empty() : lifecycle.relay();
                boolean full = backlog >= limit;
                boolean tooOld = oldest.isPresent() && maxWait.isPresent() && oldest.get().compareTo(maxWait.get()) >= 0;
                boolean failed = running.map(r -> r.state() == OutboxRelay.State.FAILED).orElse(false);
                Health.Builder health = full || tooOld || failed ? Health.down() : Health.up();
                health.withDetail("outbox", outbox.name()).withDetail("backlog", backlog).withDetail("limit", limit)
                        .withDetail("parked", outbox.parked().count());
                oldest.ifPresent(age -> health.withDetail("oldestSeconds", age.toSeconds()));
                maxWait.ifPresent(wait -> health.withDetail("maxWaitSeconds", wait.toSeconds()));
                if (tooOld) {
                    health.withDetail("waitedTooLong", "the oldest entry has waited " + oldest.get().toSeconds()
                            + " s, max-wait is " + maxWait.get().toSeconds() + " s: check that a relay runs and that"
                            + " RabbitMQ takes its messages; past orderless.compaction.grace actions may arrive beyond"
                            + " the horizon");
                }
                running.ifPresentOrElse(relay -> {
                    health.withDetail("relay", relay.state().name());
                    relay.problem().ifPresent(p -> health.withDetail("problem", p));
                }, () -> health.withDetail("relay", OutboxRelay.State.STOPPED.name()));
                return health.build();
            };
        }
    }
}
