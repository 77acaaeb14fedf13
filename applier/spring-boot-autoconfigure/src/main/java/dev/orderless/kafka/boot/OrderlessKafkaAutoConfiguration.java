package dev.orderless.kafka.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.boot.OrderlessAutoConfiguration;
import dev.orderless.boot.OrderlessHistoryBaseline;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.history.History;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.kafka.autoconfigure.KafkaConnectionDetails;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;

/**
 * The Kafka share-group consumer in a Spring Boot 4 application: with {@code orderless.kafka.topic} set (and not
 * {@code orderless.kafka.enabled=false}), the same way {@code orderless.consumer.queue} starts the RabbitMQ consumer,
 * and where {@link OrderlessAutoConfiguration} made the {@link GuardedApplier} ({@code orderless.database},
 * {@code orderless.collection}, the application's {@code CollectionSchema}). Without the topic nothing of Kafka is
 * made and nothing of Kafka is needed on the class path; with it, orderless-kafka and Spring Boot's Kafka support
 * ({@code spring-kafka}, {@code spring-boot-kafka}) must be there, or the start fails saying what to add.
 * <ol>
 *   <li>an {@link OrderlessKafkaConsumer} lifecycle bean: the topology declared ({@code orderless.kafka.declare}),
 *       then the {@link ShareGroupConsumer} from {@code orderless.kafka.*} ({@link OrderlessProperties.Kafka}),
 *       connected as {@code spring.kafka.*} says (Boot's {@link KafkaProperties} and {@link KafkaConnectionDetails}),
 *       with the application's meters, observations, and history ({@code orderless.history.enabled}; it consumes once
 *       the history's start is decided);
 *   <li>its health indicator ({@code orderlessKafka}, off with {@code management.health.orderlesskafka.enabled=false}).
 * </ol>
 * A missing or out-of-range property fails the start with a message naming it.
 */
@AutoConfiguration(after = OrderlessAutoConfiguration.class,
        afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnProperty(prefix = "orderless.kafka", name = "topic")
@ConditionalOnBooleanProperty(name = "orderless.kafka.enabled", matchIfMissing = true)
@EnableConfigurationProperties(OrderlessProperties.class)
public class OrderlessKafkaAutoConfiguration {
    /** What {@code orderless.kafka.topic} needs on the class path: a class of each artifact, and the artifact. */
    private static final Map<String, String> NEEDED = Map.of(
            "dev.orderless.kafka.ShareGroupConsumer", "dev.orderless:orderless-kafka",
            "org.springframework.kafka.core.KafkaTemplate", "org.springframework.kafka:spring-kafka",
            "org.springframework.boot.kafka.autoconfigure.KafkaProperties", "org.springframework.boot:spring-boot-kafka");

    /** A topic set without the artifacts would start no consumer in silence: the start fails, saying what to add. */
    @Bean
    InitializingBean orderlessKafkaClassPathCheck(ResourceLoader resources) {
        return () -> {
            List<String> missing = new ArrayList<>();
            NEEDED.forEach((type, artifact) -> {
                if (!ClassUtils.isPresent(type, resources.getClassLoader())) {
                    missing.add(artifact);
                }
            });
            if (!missing.isEmpty()) {
                missing.sort(null);
                throw new InvalidConfigurationException("orderless.kafka.topic is set but " + missing + " is not on"
                        + " the class path: add it (the starter does not bring Kafka), or remove orderless.kafka.topic");
            }
        };
    }

    /**
     * A topic set where no {@link GuardedApplier} was made (no {@code CollectionSchema} bean) would start no consumer in
     * silence: the start fails, saying what to declare.
     */
    @Bean
    InitializingBean orderlessKafkaApplierCheck(ObjectProvider<GuardedApplier> applier) {
        return () -> {
            if (applier.getIfAvailable() == null) {
                throw new InvalidConfigurationException("orderless.kafka.topic is set but there is no GuardedApplier to"
                        + " apply with: declare a CollectionSchema bean (the entities' fields) and set orderless.database"
                        + " and orderless.collection, or remove orderless.kafka.topic");
            }
        };
    }

    /** The consumer and its health, where orderless-kafka and Boot's Kafka support are on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(GuardedApplier.class)
    @ConditionalOnClass(name = {"dev.orderless.kafka.ShareGroupConsumer", "org.springframework.kafka.core.KafkaTemplate",
            "org.springframework.boot.kafka.autoconfigure.KafkaProperties"})
    @EnableConfigurationProperties(KafkaProperties.class)   // spring.kafka.*, also where Boot's KafkaAutoConfiguration is off
    static class Consuming {

        @Bean
        OrderlessKafkaConsumer orderlessKafkaConsumer(GuardedApplier applier, OrderlessProperties properties,
                                                      KafkaProperties kafkaProperties,
                                                      ObjectProvider<KafkaConnectionDetails> connectionDetails,
                                                      ObjectProvider<MeterRegistry> meters,
                                                      ObjectProvider<ObservationRegistry> observations,
                                                      ObjectProvider<History> history,
                                                      ObjectProvider<OrderlessHistoryBaseline> baseline) {
            OrderlessProperties.Kafka settings = properties.kafka();
            ShareConsumerOptions options = KafkaSettings.options(settings);   // a bad property fails the start here
            Map<String, Object> kafka = KafkaSettings.clientProperties(kafkaProperties,
                    Optional.ofNullable(connectionDetails.getIfAvailable()));
            MeterRegistry registry = meters.getIfAvailable(SimpleMeterRegistry::new);
            ObservationRegistry observed = observations.getIfAvailable(() -> ObservationRegistry.NOOP);
            Supplier<ShareGroupConsumer> starter = () -> {
                ShareGroupConsumer.Builder builder = ShareGroupConsumer.builder(kafka, applier).options(options)
                        .meters(registry).observations(observed).decoder(settings.envelope().envelope(registry));
                history.ifAvailable(builder::history);   // orderless.history.enabled: record, then apply
                return builder.start();
            };
            // with the history, the consumer starts once how the history starts is decided (MongoDB may be away)
            Supplier<Optional<String>> before = () -> Optional.ofNullable(baseline.getIfAvailable())
                    .flatMap(OrderlessHistoryBaseline::waitingFor)
                    .map(waiting -> "the history's start to be decided; it waits for " + waiting);
            return new OrderlessKafkaConsumer(kafka, options,
                    settings.declare() ? OptionalInt.of(settings.partitions()) : OptionalInt.empty(), starter, before);
        }

        /** Health, where Spring Boot's health support is on the class path. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        @ConditionalOnEnabledHealthIndicator("orderlesskafka")   // management.health.orderlesskafka.enabled
        static class Health {
            @Bean
            OrderlessKafkaHealth orderlessKafkaHealthIndicator(OrderlessKafkaConsumer consumer) {
                return new OrderlessKafkaHealth(consumer);
            }
        }
    }
}
