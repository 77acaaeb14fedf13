package dev.orderless.console.fleet;

import com.mongodb.client.MongoClient;
import dev.orderless.boot.OrderlessCompaction;
import dev.orderless.boot.OrderlessConsumer;
import dev.orderless.boot.OrderlessFeeders;
import dev.orderless.boot.OrderlessHistoryBaseline;
import dev.orderless.boot.OrderlessHistoryRetention;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.boot.OrderlessView;
import dev.orderless.console.ConsoleSources;
import dev.orderless.console.fleet.internal.RunningParts;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Reports an instance to the fleet where it serves no console ({@code orderless.console.fleet.report=true}: a
 * consumer without a web server), so the console of any other instance shows it. An instance serving the console
 * reports itself anyway, through {@link dev.orderless.console.ConsoleAutoConfiguration}; this one then stands back. It
 * reports what the application's orderless beans run: its consumer, the feeders of its views, its passes and its
 * outbox relay.
 */
@AutoConfiguration(afterName = {"dev.orderless.console.ConsoleAutoConfiguration",
        "dev.orderless.boot.OrderlessAutoConfiguration", "dev.orderless.outbox.boot.OrderlessOutboxAutoConfiguration"})
@ConditionalOnProperty(prefix = "orderless.console.fleet", name = "report", havingValue = "true")
@ConditionalOnClass(MongoClient.class)
public class FleetAutoConfiguration {
    /** Created by Spring Boot. */
    public FleetAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(MongoClient.class)
    FleetReporter orderlessFleetReporter(ObjectProvider<ConsoleSources> sources,
                                         ObjectProvider<OrderlessConsumer> consumer,
                                         ObjectProvider<ConnectionFactory> connectionFactory,
                                         ObjectProvider<OrderlessFeeders> feeders, ObjectProvider<OrderlessView> views,
                                         ObjectProvider<OrderlessCompaction> compaction,
                                         ObjectProvider<OrderlessHistoryRetention> retention,
                                         ObjectProvider<OrderlessHistoryBaseline> baseline,
                                         ObjectProvider<MeterRegistry> meters,
                                         ObjectProvider<ConsoleSources.Outbox> outbox, OrderlessProperties properties,
                                         MongoClient client, Environment environment) {
        // an application's own ConsoleSources says what runs in it; otherwise its orderless beans, as the console's
        InstanceSnapshot snapshot = Optional.ofNullable(sources.getIfAvailable())
                .map(own -> InstanceSnapshot.of(own, Optional.empty())).orElseGet(() -> {
                    RunningParts running = RunningParts.of(consumer, connectionFactory, feeders, views, compaction,
                            retention, baseline, meters);
                    return new InstanceSnapshot(running.consumers(), running.feeders(),
                            Optional.ofNullable(outbox.getIfAvailable()), running.passes(), running.meters(),
                            Optional.empty());
                });
        return FleetReporter.of(properties.database(client), properties.console().fleet(), snapshot,
                Optional.ofNullable(environment.getProperty("spring.application.name")));
    }

    /** The outbox relay's figures, where the application has the producer artifact and a relay. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.orderless.outbox.OutboxRelay")
    static class Outbox {
        @Bean
        @ConditionalOnBean(dev.orderless.outbox.boot.OrderlessOutboxRelay.class)
        @ConditionalOnMissingBean
        ConsoleSources.Outbox orderlessFleetOutbox(dev.orderless.outbox.boot.OrderlessOutboxRelay relay) {
            return RunningParts.OutboxFigures.of(relay);
        }
    }
}
