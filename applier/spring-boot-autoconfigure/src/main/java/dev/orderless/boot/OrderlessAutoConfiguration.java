package dev.orderless.boot;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.boot.internal.Amqp10Transport;
import dev.orderless.broker.QueueTopology;
import dev.orderless.compaction.CompactionSchedule;
import dev.orderless.history.HistoryBaseline;
import dev.orderless.history.HistoryOptions;
import dev.orderless.history.RetentionSchedule;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;

/**
 * orderless in a Spring Boot 4 application. Active when the application has one {@link MongoClient} (or a
 * {@code @Primary} one) and a {@link CollectionSchema} bean; the consumer also needs one Rabbit
 * {@link ConnectionFactory} (Boot's, from {@code spring.rabbitmq.*}). From {@link OrderlessProperties}:
 * <ol>
 *   <li>a {@link GuardedApplier} on {@code orderless.database}/{@code orderless.collection} (unless the
 *       application has its own);
 *   <li>with {@code orderless.consumer.queue}: the queue and its dead-letter queue, declared at start-up
 *       and as {@link Declarables} for Boot's {@code RabbitAdmin}, and an {@link OrderlessConsumer}
 *       lifecycle bean with a health indicator ({@code orderlessConsumer}). Its listener container comes
 *       from Boot's {@code rabbitListenerContainerFactory} ({@code spring.rabbitmq.listener.simple.*},
 *       container customizers), its observations go to the application's {@code ObservationRegistry};
 *   <li>with {@code orderless.compaction.enabled=true}: {@link OrderlessCompaction}, one pass per interval
 *       across every instance;
 *   <li>for each {@link OrderlessView} bean: its feeder, in one {@link OrderlessFeeders} lifecycle bean, with
 *       a health indicator ({@code orderlessViews});
 *   <li>with {@code orderless.history.enabled=true}: a {@link dev.orderless.history.History} bean of the
 *       applier's collection, which the consumer records every operation in before applying it, a health
 *       indicator ({@code orderlessHistory}), {@link OrderlessHistoryBaseline}, which decides before the consumer
 *       starts whether the live documents must be taken into the history ({@code orderless.history.baseline.enabled})
 *       and does it once across every instance, and with {@code orderless.history.retention.keep},
 *       {@link OrderlessHistoryRetention},
 *       one pass per interval across every instance.
 * </ol>
 * A missing or out-of-range property fails the start with a message naming it.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
        "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration"})
@ConditionalOnClass({MongoClient.class, ConnectionFactory.class})
@ConditionalOnSingleCandidate(MongoClient.class)
@ConditionalOnBean(CollectionSchema.class)
@EnableConfigurationProperties(OrderlessProperties.class)
public class OrderlessAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(OrderlessAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    GuardedApplier orderlessApplier(MongoClient client, ObjectProvider<CollectionSchema> schemas,
                                    OrderlessProperties properties, ObjectProvider<MeterRegistry> meters) {
        return GuardedApplier.create(entities(database(client, properties), properties), entitySchema(schemas),
                ApplierOptions.ofDefaults().withMeters(meters.getIfAvailable(SimpleMeterRegistry::new)));
    }

    /**
     * Every {@code orderless.view.<name>} names an {@link OrderlessView} bean, whether or not there are any:
     * properties for a view that is not declared would otherwise be ignored in silence.
     */
    @Bean
    InitializingBean orderlessViewPropertiesCheck(OrderlessProperties properties, ObjectProvider<OrderlessView> views) {
        return () -> {
            Set<String> names = new java.util.TreeSet<>();
            views.orderedStream().forEach(view -> names.add(view.name()));
            for (String configured : new java.util.TreeSet<>(properties.view().keySet())) {
                if (!names.contains(configured)) {
                    throw new InvalidConfigurationException("orderless.view." + configured + ".* configures no view: "
                            + (names.isEmpty() ? "there is no OrderlessView bean; declare one named '" + configured
                            + "' (see OrderlessView)" : "the OrderlessView beans are named " + names));
                }
            }
        };
    }

    /** The view feeders: one per {@link OrderlessView} bean, under leases in {@code orderless.leases}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(OrderlessView.class)
    static class Feeding {

        @Bean
        OrderlessFeeders orderlessFeeders(MongoClient client, OrderlessProperties properties, List<OrderlessView> views,
                                          ObjectProvider<MeterRegistry> meters) {
            MongoDatabase database = database(client, properties);
            Set<String> names = new HashSet<>();
            for (OrderlessView view : views) {
                if (!names.add(view.name())) {
                    throw new InvalidConfigurationException("two OrderlessView beans are named '" + view.name()
                            + "': a name picks the view's lease and properties, so it must be unique");
                }
                properties.viewOptions(view.name());   // a bad orderless.view.<name>.* fails the start here
            }
            MongoCollection<BsonDocument> leases = database.getCollection(properties.leases(), BsonDocument.class);
            return new OrderlessFeeders(client, database, views, leases, view -> properties.viewOptions(view.name()),
                    meters.getIfAvailable(SimpleMeterRegistry::new));
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        @ConditionalOnEnabledHealthIndicator("orderlessviews")   // management.health.orderlessviews.enabled
        static class Health {
            @Bean
            OrderlessFeedersHealth orderlessViewsHealthIndicator(OrderlessFeeders feeders) {
                return new OrderlessFeedersHealth(feeders);
            }
        }
    }

    /** Scheduled compaction of {@code orderless.collection}, with {@code orderless.compaction.enabled=true}. */
    @Bean
    @ConditionalOnBooleanProperty(name = "orderless.compaction.enabled")
    OrderlessCompaction orderlessCompaction(MongoClient client, ObjectProvider<CollectionSchema> schemas,
                                            OrderlessProperties properties, ObjectProvider<MeterRegistry> meters) {
        MongoDatabase database = database(client, properties);
        MongoCollection<BsonDocument> entities = entities(database, properties);
        MeterRegistry registry = meters.getIfAvailable(SimpleMeterRegistry::new);
        TombstoneCompactor compactor = TombstoneCompactor.create(entities, entitySchema(schemas),
                properties.compaction().grace(), ApplierOptions.ofDefaults().withMeters(registry));
        LeaseProvider leases = MongoLeaseProvider.create(database.getCollection(properties.leases(), BsonDocument.class),
                LeaseOptions.ofDefaults());
        String collection = entities.getNamespace().getCollectionName();
        return new OrderlessCompaction(CompactionSchedule.create(compactor, leases, collection, owner(),
                properties.compaction().interval(), Clock.systemUTC()), collection, registry);
    }

    /** The version history of the entity collection, with {@code orderless.history.enabled=true}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "orderless.history.enabled")
    static class Recording {

        /** The history of the applier's collection: its reads check the live documents, the baseline takes them. */
        @Bean
        @ConditionalOnMissingBean
        dev.orderless.history.History orderlessHistory(MongoClient client, GuardedApplier applier,
                                                       OrderlessProperties properties,
                                                       ObjectProvider<MeterRegistry> meters) {
            return dev.orderless.history.History.of(database(client, properties).getCollection(
                            properties.historyCollection(), BsonDocument.class), applier.schema(),
                    HistoryOptions.ofDefaults().withMeters(meters.getIfAvailable(SimpleMeterRegistry::new)))
                    .withLive(applier.reads());
        }

        /** Decided as it is made, before the consumer starts ({@code orderless.history.baseline.enabled}). */
        @Bean
        OrderlessHistoryBaseline orderlessHistoryBaseline(MongoClient client, dev.orderless.history.History history,
                                                          OrderlessProperties properties,
                                                          ObjectProvider<MeterRegistry> meters) {
            Optional<Boolean> enabled = Optional.ofNullable(properties.history().baseline().enabled());
            MeterRegistry registry = meters.getIfAvailable(SimpleMeterRegistry::new);
            if (history.live().isEmpty()) {
                throw new InvalidConfigurationException("orderless.history.enabled: the History bean does not know its"
                        + " live collection, so none of its reads could answer (each would say it cannot tell): build"
                        + " it with History.withLive(collection)");
            }
            LeaseProvider leases = MongoLeaseProvider.create(database(client, properties)
                    .getCollection(properties.leases(), BsonDocument.class), LeaseOptions.ofDefaults());
            return new OrderlessHistoryBaseline(HistoryBaseline.create(history, leases, owner(),
                    OrderlessHistoryBaseline.INTERVAL), enabled, history, registry);
        }

        @Bean
        @ConditionalOnProperty(prefix = "orderless.history.retention", name = "keep")
        OrderlessHistoryRetention orderlessHistoryRetention(MongoClient client, dev.orderless.history.History history,
                                                            OrderlessProperties properties,
                                                            ObjectProvider<MeterRegistry> meters) {
            LeaseProvider leases = MongoLeaseProvider.create(database(client, properties)
                    .getCollection(properties.leases(), BsonDocument.class), LeaseOptions.ofDefaults());
            String name = history.collection().getNamespace().getCollectionName();
            return new OrderlessHistoryRetention(RetentionSchedule.create(history, leases,
                    properties.historyKeep().orElseThrow(), owner(), properties.history().retention().interval()),
                    name, meters.getIfAvailable(SimpleMeterRegistry::new));
        }

        /** Health, where Spring Boot's health support is on the class path. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        @ConditionalOnEnabledHealthIndicator("orderlesshistory")   // management.health.orderlesshistory.enabled
        static class Health {
            @Bean
            OrderlessHistoryHealth orderlessHistoryHealthIndicator(dev.orderless.history.History history,
                                                                   ObjectProvider<OrderlessHistoryRetention> retention,
                                                                   OrderlessHistoryBaseline baseline,
                                                                   OrderlessProperties properties) {
                return new OrderlessHistoryHealth(history, Optional.ofNullable(retention.getIfAvailable()), baseline,
                        properties.historyKeep());
            }
        }
    }

    /** The consumer: only with {@code orderless.consumer.queue}, and not with {@code orderless.consumer.enabled=false}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "orderless.consumer", name = "queue")
    @ConditionalOnBooleanProperty(name = "orderless.consumer.enabled", matchIfMissing = true)
    @ConditionalOnSingleCandidate(ConnectionFactory.class)
    static class Consuming {

        /** With an explicit queue type, the queues for Boot's {@code RabbitAdmin}, declared on every connection. */
        @Bean
        Declarables orderlessQueues(OrderlessProperties properties) {
            OrderlessProperties.Consumer consumer = properties.consumer();
            if (consumer.queueType() == OrderlessProperties.QueueType.AUTO) {
                return new Declarables();   // the consumer asks the broker when it starts, and declares then
            }
            String dlq = consumer.deadLetterQueue() != null ? consumer.deadLetterQueue()
                    : ConsumerOptions.defaultDeadLetterQueue(consumer.queue());
            return QueueTopology.declarables(consumer.queue(), dlq,
                    consumer.queueType() == OrderlessProperties.QueueType.QUORUM ? QueueTopology.QueueType.QUORUM
                            : QueueTopology.QueueType.CLASSIC,
                    properties.deadLetterTtl());
        }

        @Bean
        OrderlessConsumer orderlessConsumer(ConnectionFactory connectionFactory, GuardedApplier applier,
                                            OrderlessProperties properties, Environment environment,
                                            ObjectProvider<MeterRegistry> meters,
                                            ObjectProvider<ObservationRegistry> observations,
                                            ObjectProvider<SimpleRabbitListenerContainerFactory> containers,
                                            ObjectProvider<dev.orderless.history.History> history,
                                            ObjectProvider<OrderlessHistoryBaseline> baseline,
                                            ObjectProvider<RabbitConnectionDetails> rabbitDetails,
                                            ResourceLoader resources,
                                            org.springframework.beans.factory.BeanFactory beanFactory) {
            // Spring Boot's listener properties, read as Boot binds them (relaxed names, environment variables)
            Binder binder = Binder.get(environment);
            String simple = "spring.rabbitmq.listener.simple.";
            Optional<Integer> batch = binder.bind(simple + "consumer-batch-enabled", Boolean.class).orElse(false)
                    ? Optional.ofNullable(binder.bind(simple + "batch-size", Integer.class).orElse(null)) : Optional.empty();
            ConsumerOptions options = properties.consumer().options(
                    Optional.ofNullable(binder.bind(simple + "concurrency", Integer.class).orElse(null)),
                    Optional.ofNullable(binder.bind(simple + "prefetch", Integer.class).orElse(null)), batch);
            if (binder.bind(simple + "retry.enabled", Boolean.class).orElse(false)) {
                log.warn("spring.rabbitmq.listener.simple.retry.enabled does not apply to the orderless consumer on"
                        + " '{}': it retries MongoDB itself (orderless.consumer.backoff.*, max-hold)",
                        options.queue());
            }
            ObservationRegistry registry = observations.getIfAvailable(() -> ObservationRegistry.NOOP);
            // Boot's container factory, when the application has one: spring.rabbitmq.listener.simple.* and customizers
            SimpleRabbitListenerContainerFactory factory = containers.getIfUnique();
            Optional<Duration> deadLetterTtl = properties.deadLetterTtl();   // refused here if longer than the grace
            MeterRegistry registered = meters.getIfAvailable(SimpleMeterRegistry::new);
            // with the history, the consumer starts once how the history starts is decided (MongoDB may be away)
            java.util.function.Supplier<Optional<String>> before = () -> Optional.ofNullable(baseline.getIfAvailable())
                    .flatMap(OrderlessHistoryBaseline::waitingFor)
                    .map(waiting -> "the history's start to be decided; it waits for " + waiting);
            if (properties.consumer().protocol() == OrderlessProperties.Protocol.AMQP_1_0) {
                if (!ClassUtils.isPresent(Amqp10Transport.CONSUMER_CLASS, resources.getClassLoader())) {
                    throw new InvalidConfigurationException("orderless.consumer.protocol=amqp-1.0 needs"
                            + " dev.orderless:orderless-rabbit-amqp10 on the class path: add that dependency, or set"
                            + " orderless.consumer.protocol=amqp-0-9-1");
                }
                if (binder.bind("spring.rabbitmq.ssl.enabled", Boolean.class).orElse(false)
                        || binder.bind("spring.rabbitmq.ssl.bundle", String.class).isBound()
                        || binder.bind("spring.rabbitmq.addresses", String.class).map(a -> a.contains("amqps://"))
                        .orElse(false)) {
                    throw new InvalidConfigurationException("orderless.consumer.protocol=amqp-1.0 does not take TLS yet"
                            + " (spring.rabbitmq.ssl.enabled, spring.rabbitmq.ssl.bundle or an amqps:// address in"
                            + " spring.rabbitmq.addresses): use orderless.consumer.protocol=amqp-0-9-1 over TLS");
                }
                RabbitConnectionDetails details = rabbitDetails.getIfAvailable(() -> {
                    throw new InvalidConfigurationException("orderless.consumer.protocol=amqp-1.0 found no RabbitMQ"
                            + " connection details: set spring.rabbitmq.host (or addresses), port, username, password");
                });
                return new OrderlessConsumer(connectionFactory, options, properties.consumer().queueType(),
                        OrderlessProperties.Protocol.AMQP_1_0, deadLetterTtl, Amqp10Transport.starter(details, applier,
                        options, registered, registry, Optional.ofNullable(history.getIfAvailable()),
                        properties.consumer().envelope(registered), beanFactory), before);
            }
            return OrderlessConsumer.overAmqp091(connectionFactory, applier, options, properties.consumer().queueType(),
                    registered, deadLetterTtl, before, builder -> {
                        builder.observations(registry).decoder(properties.consumer().envelope(registered));
                        history.ifAvailable(builder::history);   // orderless.history.enabled: record, then apply
                        return factory == null ? builder : builder.container(factory::createListenerContainer);
                    });
        }

        /** The dead letters as an Actuator endpoint, where Spring Boot's Actuator is on the class path. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
        static class Endpoints {
            @Bean
            OrderlessDeadLettersEndpoint orderlessDeadLettersEndpoint(ConnectionFactory connectionFactory,
                                                                      OrderlessConsumer consumer,
                                                                      OrderlessProperties properties) {
                return new OrderlessDeadLettersEndpoint(connectionFactory, consumer.options(), properties.replayGrace(),
                        Clock.systemUTC());
            }
        }

        /** Health, where Spring Boot's health support is on the class path. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        @ConditionalOnEnabledHealthIndicator("orderlessconsumer")   // management.health.orderlessconsumer.enabled
        static class Health {
            @Bean
            OrderlessConsumerHealth orderlessConsumerHealthIndicator(OrderlessConsumer consumer) {
                return new OrderlessConsumerHealth(consumer);
            }
        }
    }

    /** This instance, unique per incarnation: a lease owner. */
    private static String owner() {
        return ManagementFactory.getRuntimeMXBean().getName() + "/" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The entity collection's schema: the only {@link CollectionSchema} bean, or the {@code @Primary} one. */
    private static CollectionSchema entitySchema(ObjectProvider<CollectionSchema> schemas) {
        CollectionSchema schema = schemas.getIfUnique();
        if (schema == null) {
            throw new InvalidConfigurationException("several CollectionSchema beans and none of them @Primary: mark the"
                    + " entity collection's schema @Primary (a view's schema belongs in its OrderlessView only)");
        }
        return schema;
    }

    private static MongoDatabase database(MongoClient client, OrderlessProperties properties) {
        return properties.database(client);
    }

    private static MongoCollection<BsonDocument> entities(MongoDatabase database, OrderlessProperties properties) {
        return database.getCollection(properties.requiredCollection(), BsonDocument.class);
    }
}
