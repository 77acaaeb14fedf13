package dev.orderless.boot;

import com.mongodb.client.MongoClient;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.QueueTopology;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.compaction.CompactionSchedule;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import com.mongodb.client.MongoDatabase;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonDocument;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.amqp.autoconfigure.RabbitProperties;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * orderless in a Spring Boot 4 application. Active when the application has a {@link MongoClient}, a
 * Rabbit {@link ConnectionFactory} (Boot's, from {@code spring.rabbitmq.*}) and a {@link CollectionSchema}
 * bean. From {@link OrderlessProperties}:
 * <ol>
 *   <li>a {@link GuardedApplier} on {@code orderless.database}/{@code orderless.collection} (unless the
 *       application has its own);
 *   <li>with {@code orderless.consumer.queue}: the queue and its dead-letter queue, declared at start-up
 *       and as {@link Declarables} for Boot's {@code RabbitAdmin}, and an {@link OrderlessConsumer}
 *       lifecycle bean with a health indicator ({@code orderlessConsumer});
 *   <li>with {@code orderless.compaction.enabled=true}: {@link OrderlessCompaction}, one pass per interval
 *       across every instance;
 *   <li>for each {@link OrderlessView} bean: its feeder, in one {@link OrderlessFeeders} lifecycle bean, with
 *       a health indicator ({@code orderlessViews}).
 * </ol>
 * A missing or out-of-range property fails the start with a message naming it.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
        "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration"})
@ConditionalOnClass({MongoClient.class, ConnectionFactory.class})
@ConditionalOnBean({MongoClient.class, ConnectionFactory.class, CollectionSchema.class})
@EnableConfigurationProperties(OrderlessProperties.class)
public class OrderlessAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    GuardedApplier orderlessApplier(MongoClient client, CollectionSchema schema, OrderlessProperties properties,
                                    ObjectProvider<MeterRegistry> meters) {
        String database = required("orderless.database", properties.database(), "the MongoDB database of the entities");
        String collection = required("orderless.collection", properties.collection(), "the entity collection");
        return GuardedApplier.create(client.getDatabase(database).getCollection(collection, BsonDocument.class), schema,
                ApplierOptions.ofDefaults().withMeters(meters.getIfAvailable(SimpleMeterRegistry::new)));
    }

    /** The view feeders: one per {@link OrderlessView} bean, under leases in {@code orderless.leases}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(OrderlessView.class)
    static class Feeding {

        @Bean
        OrderlessFeeders orderlessFeeders(MongoClient client, OrderlessProperties properties, List<OrderlessView> views,
                                          ObjectProvider<MeterRegistry> meters) {
            MongoDatabase database = client.getDatabase(required("orderless.database", properties.database(),
                    "the MongoDB database of the sources and views"));
            Set<String> names = new HashSet<>();
            for (OrderlessView view : views) {
                if (!names.add(view.name())) {
                    throw new InvalidConfigurationException("two OrderlessView beans are named '" + view.name()
                            + "': a name picks the view's lease and properties, so it must be unique");
                }
                properties.viewOptions(view.name());   // a bad orderless.view.<name>.* fails the start here
            }
            for (String configured : properties.view().keySet()) {
                if (!names.contains(configured)) {
                    throw new InvalidConfigurationException("orderless.view." + configured + " configures no view: the"
                            + " OrderlessView beans are named " + names);
                }
            }
            LeaseProvider leases = MongoLeaseProvider.create(database.getCollection(properties.leases(), BsonDocument.class),
                    LeaseOptions.ofDefaults());
            return new OrderlessFeeders(database, views, leases, view -> properties.viewOptions(view.name()),
                    meters.getIfAvailable(SimpleMeterRegistry::new));
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
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
    OrderlessCompaction orderlessCompaction(MongoClient client, CollectionSchema schema, OrderlessProperties properties,
                                            ObjectProvider<MeterRegistry> meters) {
        String database = required("orderless.database", properties.database(), "the MongoDB database of the entities");
        String collection = required("orderless.collection", properties.collection(), "the entity collection");
        Duration grace = properties.compaction().grace();
        if (grace == null) {
            throw new InvalidConfigurationException("orderless.compaction.grace is not set: how long a tombstone is"
                    + " kept, longer than any message can take to arrive (retries and dead-letter replays included)");
        }
        MongoDatabase db = client.getDatabase(database);
        ApplierOptions options = ApplierOptions.ofDefaults().withMeters(meters.getIfAvailable(SimpleMeterRegistry::new));
        TombstoneCompactor compactor = TombstoneCompactor.create(db.getCollection(collection, BsonDocument.class), schema,
                grace, options);
        LeaseProvider leases = MongoLeaseProvider.create(db.getCollection(properties.leases(), BsonDocument.class),
                LeaseOptions.ofDefaults());
        String owner = ManagementFactory.getRuntimeMXBean().getName() + "/" + UUID.randomUUID().toString().substring(0, 8);
        return new OrderlessCompaction(CompactionSchedule.create(compactor, leases, collection, owner,
                properties.compaction().interval(), Clock.systemUTC()), collection);
    }

    /** The consumer: only with {@code orderless.consumer.queue}, and not with {@code orderless.consumer.enabled=false}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "orderless.consumer", name = "queue")
    @ConditionalOnBooleanProperty(name = "orderless.consumer.enabled", matchIfMissing = true)
    static class Consuming {

        @Bean
        ConsumerOptions orderlessConsumerOptions(OrderlessProperties properties, ObjectProvider<RabbitProperties> rabbit) {
            Optional<RabbitProperties.SimpleContainer> simple = Optional.ofNullable(rabbit.getIfAvailable())
                    .map(r -> r.getListener().getSimple());
            return properties.consumer().options(simple.map(RabbitProperties.SimpleContainer::getConcurrency),
                    simple.map(RabbitProperties.SimpleContainer::getPrefetch),
                    simple.filter(RabbitProperties.SimpleContainer::isConsumerBatchEnabled)
                            .map(RabbitProperties.SimpleContainer::getBatchSize));
        }

        /**
         * The queues, declared at start-up (quorum on RabbitMQ, classic on other brokers), so a queue that
         * exists with other arguments fails the start with a message naming it.
         */
        @Bean
        QueueTopology.Declared orderlessTopology(ConnectionFactory connectionFactory, ConsumerOptions options) {
            return QueueTopology.declare(connectionFactory, options.queue(), options.deadLetterQueue());
        }

        /** The same queues for Boot's {@code RabbitAdmin}, which declares them again after a reconnect. */
        @Bean
        Declarables orderlessQueues(QueueTopology.Declared topology) {
            return QueueTopology.declarables(topology.queue(), topology.deadLetterQueue(), topology.quorum());
        }

        @Bean
        OrderlessConsumer orderlessConsumer(ConnectionFactory connectionFactory, GuardedApplier applier,
                                            ConsumerOptions options, QueueTopology.Declared topology,
                                            ObjectProvider<MeterRegistry> meters) {
            return new OrderlessConsumer(connectionFactory, applier, options,
                    meters.getIfAvailable(SimpleMeterRegistry::new));
        }

        /** Health, where Spring Boot's health support is on the class path. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        static class Health {
            @Bean
            OrderlessConsumerHealth orderlessConsumerHealthIndicator(OrderlessConsumer consumer) {
                return new OrderlessConsumerHealth(consumer);
            }
        }
    }

    private static String required(String property, String value, String what) {
        if (value == null || value.isBlank()) {
            throw new InvalidConfigurationException(property + " is not set: name " + what);
        }
        return value;
    }
}
