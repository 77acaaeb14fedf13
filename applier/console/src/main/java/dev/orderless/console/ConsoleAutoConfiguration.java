package dev.orderless.console;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.boot.OrderlessCompaction;
import dev.orderless.boot.OrderlessConsumer;
import dev.orderless.boot.OrderlessFeeders;
import dev.orderless.boot.OrderlessHistoryBaseline;
import dev.orderless.boot.OrderlessHistoryRetention;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.boot.OrderlessView;
import dev.orderless.console.audit.AuditLog;
import dev.orderless.console.fleet.Backlog;
import dev.orderless.console.fleet.Fleet;
import dev.orderless.console.fleet.FleetReporter;
import dev.orderless.console.fleet.InstanceSnapshot;
import dev.orderless.console.fleet.LetterFigures;
import dev.orderless.console.fleet.internal.RunningParts;
import dev.orderless.console.letters.LetterActions;
import dev.orderless.console.letters.LetterIngestion;
import dev.orderless.console.letters.LetterStore;
import dev.orderless.history.History;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Serves the console when {@code orderless.console.enabled=true} in a servlet web application: the page and its JSON
 * under {@code orderless.console.path}, showing what {@link ConsoleSources} holds. An application that declares a
 * {@code ConsoleSources} bean shows that; otherwise it is built from the orderless beans there are (the consumer and
 * its dead letters, the feeders of the {@link OrderlessView} beans, the history, the outbox relay, the passes).
 * An instance serving the console also reports itself to the fleet ({@link FleetReporter}, every
 * {@code orderless.console.fleet.interval}), and its page shows every instance's report, the work queues' backlog
 * and a banner of what is wrong ({@link Fleet}); {@link dev.orderless.console.fleet.FleetAutoConfiguration} reports an
 * instance without a web server.
 */
@AutoConfiguration(afterName = {"dev.orderless.boot.OrderlessAutoConfiguration",
        "dev.orderless.outbox.boot.OrderlessOutboxAutoConfiguration"})
@ConditionalOnProperty(prefix = "orderless.console", name = "enabled", havingValue = "true")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
public class ConsoleAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(ConsoleAutoConfiguration.class);

    /** Created by Spring Boot. */
    public ConsoleAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean
    ConsoleSources orderlessConsoleSources(ObjectProvider<GuardedApplier> appliers, ObjectProvider<History> history,
                                           ObjectProvider<OrderlessConsumer> consumer,
                                           ObjectProvider<ConnectionFactory> connectionFactory,
                                           ObjectProvider<OrderlessFeeders> feeders,
                                           ObjectProvider<OrderlessView> views, OrderlessProperties properties,
                                           ObjectProvider<OrderlessCompaction> compaction,
                                           ObjectProvider<OrderlessHistoryRetention> retention,
                                           ObjectProvider<OrderlessHistoryBaseline> baseline,
                                           ObjectProvider<MeterRegistry> meters,
                                           ObjectProvider<ConsoleSources.Outbox> outbox) {
        GuardedApplier applier = appliers.getIfAvailable();
        if (applier == null) {
            throw new dev.orderless.InvalidConfigurationException("orderless.console.enabled=true, but this application"
                    + " has no entity collection to show: declare a CollectionSchema bean and orderless.collection (as"
                    + " a consumer does), or a ConsoleSources bean of its own, or set orderless.console.enabled=false");
        }
        ConsoleSources.Builder sources = ConsoleSources.builder(applier.reads(), applier.schema());
        history.ifAvailable(sources::history);
        // what runs here, wired as the fleet's reports wire it where no console is served
        RunningParts running = RunningParts.of(consumer, connectionFactory, feeders, views, compaction, retention,
                baseline, meters);
        running.consumers().forEach(sources::consumer);
        running.feeders().forEach(sources::feeder);
        running.passes().forEach(sources::pass);
        running.meters().ifPresent(sources::meters);
        properties.replayGrace().ifPresent(sources::grace);
        outbox.ifAvailable(sources::outbox);
        return sources.build();
    }

    /** The outbox relay's figures, where the application has the producer artifact and a relay. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.orderless.outbox.OutboxRelay")
    static class Outbox {
        @Bean
        @org.springframework.boot.autoconfigure.condition.ConditionalOnBean(
                dev.orderless.outbox.boot.OrderlessOutboxRelay.class)
        @ConditionalOnMissingBean
        ConsoleSources.Outbox orderlessConsoleOutbox(dev.orderless.outbox.boot.OrderlessOutboxRelay relay) {
            return RunningParts.OutboxFigures.of(relay);
        }
    }

    /**
     * This instance's report to the fleet (an instance serving the console always reports itself), with what the
     * console shows of it.
     */
    @Bean
    @ConditionalOnMissingBean
    FleetReporter orderlessFleetReporter(ConsoleSources sources, OrderlessProperties properties, MongoClient client,
                                         Environment environment) {
        MongoDatabase database = properties.database(client);
        // the feeders' lease collection, to name who holds each view's lease
        Optional<LeaseProvider> leases = Optional.of(MongoLeaseProvider.create(
                database.getCollection(properties.leases(), org.bson.BsonDocument.class),
                dev.orderless.lease.LeaseOptions.ofDefaults()));
        return FleetReporter.of(database, properties.console().fleet(), InstanceSnapshot.of(sources, leases),
                Optional.ofNullable(environment.getProperty("spring.application.name")));
    }

    /** The work queues' backlog, from the broker (and RabbitMQ's management API, where it is named). */
    @Bean
    Backlog orderlessConsoleBacklog(ConsoleSources sources, OrderlessProperties properties, Environment environment) {
        return new Backlog(sources.consumers(), properties.console().managementUrl(),
                environment.getProperty("spring.rabbitmq.username", "guest"),
                environment.getProperty("spring.rabbitmq.password", "guest"));
    }

    /** SEAM: the stored letters' figures, none until the console's letter store declares its own. */
    @Bean
    @ConditionalOnMissingBean
    LetterFigures orderlessConsoleLetterFigures() {
        return LetterFigures.none();
    }

    @Bean
    Fleet orderlessConsoleFleet(FleetReporter reporter, Backlog backlog, LetterFigures letters) {
        return new Fleet(reporter, backlog, letters);
    }

    /**
     * The letters kept in MongoDB ({@code orderless.console.letters.*}), the audit ({@code orderless.console.audit}),
     * and an ingestion per consumer moving its dead letters in (docs/decisions/0009).
     */
    @Bean
    ConsoleLetters orderlessConsoleLetters(ConsoleSources sources, OrderlessProperties properties, MongoClient client) {
        OrderlessProperties.Console console = properties.console();
        com.mongodb.client.MongoDatabase database = properties.database(client);
        LetterStore store = LetterStore.create(database.getCollection(console.letters().collection(),
                org.bson.BsonDocument.class), console.letters().retention(), sources.clock());
        AuditLog audit = AuditLog.create(database.getCollection(console.audit(), org.bson.BsonDocument.class),
                sources.clock());
        java.util.Map<String, dev.orderless.amqp.DeadLetterQueue> queues = new java.util.LinkedHashMap<>();
        java.util.List<LetterIngestion> ingestions = new java.util.ArrayList<>();
        for (ConsoleSources.Consumer consumer : sources.consumers()) {
            queues.put(consumer.queue(), consumer.deadLetters());
            ingestions.add(new LetterIngestion(store, consumer.deadLetters()));
        }
        String instance = java.lang.management.ManagementFactory.getRuntimeMXBean().getName();
        return new ConsoleLetters(store, new LetterActions(store, audit, queues, sources.grace(), sources.clock(),
                instance), audit, ingestions);
    }

    @Bean
    ConsoleController orderlessConsoleController(ConsoleSources sources, OrderlessProperties properties,
                                                 Fleet fleet, ConsoleLetters letters) {
        OrderlessProperties.Console console = properties.console();
        log.info("orderless console at {}/ (actions for role {})", console.path(), console.actionRole());
        return new ConsoleController(sources, console, fleet, letters);
    }
}
