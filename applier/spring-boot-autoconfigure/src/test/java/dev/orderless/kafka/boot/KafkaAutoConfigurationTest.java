package dev.orderless.kafka.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.MongoBackend;
import dev.orderless.boot.OrderlessAutoConfiguration;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * When the Kafka consumer's auto-configuration steps in, and how a bad configuration fails the start; no broker is
 * reached (every context here fails or makes no consumer before it would connect).
 */
@ExtendWith(MongoExtension.class)
class KafkaAutoConfigurationTest {
    private ApplicationContextRunner runner;

    @BeforeEach
    void setUp(MongoBackend mongo) {
        runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class, KafkaAutoConfiguration.class,
                        OrderlessKafkaAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e");
    }

    @Test
    void without_a_topic_no_kafka_bean_exists() {
        runner.withPropertyValues("orderless.kafka.group=g").run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(GuardedApplier.class).doesNotHaveBean(OrderlessKafkaConsumer.class)
                .doesNotHaveBean(OrderlessKafkaHealth.class));
    }

    @Test
    void without_spring_kafka_or_orderless_kafka_on_the_class_path_nothing_of_kafka_is_made() {
        for (String hidden : new String[] {"org.springframework.kafka", "dev.orderless.kafka.ShareGroupConsumer"}) {
            runner.withClassLoader(new FilteredClassLoader(hidden)).run(context -> {
                assertThat(context).as("without %s", hidden).hasNotFailed().hasSingleBean(GuardedApplier.class);
                assertThat(context.getBeanDefinitionNames()).as("without %s", hidden)
                        .noneMatch(name -> name.startsWith("orderlessKafka") || name.startsWith("dev.orderless.kafka"));
            });
        }
    }

    @Test
    void a_topic_without_spring_kafka_fails_the_start_naming_what_to_add() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.kafka"))
                .withPropertyValues("orderless.kafka.topic=t", "orderless.kafka.group=g")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
                        "orderless.kafka.topic is set but [org.springframework.kafka:spring-kafka] is not on the class"
                                + " path: add it (the starter does not bring Kafka), or remove orderless.kafka.topic"));
    }

    @Test
    void a_topic_without_a_collection_schema_fails_the_start_saying_what_to_declare(MongoBackend mongo) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class, KafkaAutoConfiguration.class,
                        OrderlessKafkaAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.kafka.topic=t",
                        "orderless.kafka.group=g")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("orderless.kafka.topic is set but there is no GuardedApplier")
                        .hasMessageContaining("CollectionSchema bean"));
    }

    @Test
    void orderless_kafka_enabled_false_keeps_the_consumer_out_with_a_topic() {
        runner.withPropertyValues("orderless.kafka.topic=t", "orderless.kafka.group=g", "orderless.kafka.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(OrderlessKafkaConsumer.class));
    }

    @Test
    void a_bad_property_fails_the_start_naming_it() {
        Map<String, String> refusals = Map.of(
                "orderless.kafka.concurrency=0", "orderless.kafka.concurrency must be between 1 and 256, was 0",
                "orderless.kafka.max-poll-records=5000", "orderless.kafka.max-poll-records must be between 1 and 1000",
                "orderless.kafka.dead-letter-topic=t", "orderless.kafka.dead-letter-topic must differ from topic 't'",
                "orderless.kafka.max-hold=0s", "orderless.kafka.max-hold must be a positive duration",
                "orderless.kafka.backoff.jitter=2", "orderless.kafka.backoff",
                "orderless.kafka.partitions=0", "orderless.kafka.partitions must be 1 or more, was 0");
        refusals.forEach((property, message) -> runner
                .withPropertyValues("orderless.kafka.topic=t", "orderless.kafka.group=g", property)
                .run(context -> assertThat(context).as(property).hasFailed().getFailure().rootCause()
                        .hasMessageContaining(message)));
    }

    @Test
    void a_topic_without_a_group_fails_the_start_naming_the_group_property() {
        runner.withPropertyValues("orderless.kafka.topic=enrollment.ops").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageStartingWith("orderless.kafka.group is not set: name the share group")
                .hasMessageContaining("orderless.kafka.group=enrollment-ops"));
    }

    @Test
    void a_misspelt_kafka_property_fails_the_start() {
        runner.withPropertyValues("orderless.kafka.topic=t", "orderless.kafka.group=g", "orderless.kafka.concurency=2")
                .run(context -> assertThat(context).hasFailed());
    }

    @Test
    void the_client_properties_are_spring_kafkas_less_what_a_share_group_refuses() {
        runner.withPropertyValues("spring.kafka.bootstrap-servers=kafka-1:9092,kafka-2:9092",
                        "spring.kafka.consumer.auto-offset-reset=earliest", "spring.kafka.consumer.enable-auto-commit=false",
                        "spring.kafka.properties.sasl.mechanism=PLAIN", "spring.kafka.consumer.client-id=app")
                .run(context -> {
                    Map<String, Object> client = KafkaSettings.clientProperties(
                            context.getBean(org.springframework.boot.kafka.autoconfigure.KafkaProperties.class),
                            java.util.Optional.of(context.getBean(
                                    org.springframework.boot.kafka.autoconfigure.KafkaConnectionDetails.class)));
                    assertThat(client).containsEntry("bootstrap.servers", java.util.List.of("kafka-1:9092", "kafka-2:9092"))
                            .containsEntry("sasl.mechanism", "PLAIN").containsEntry("client.id", "app")
                            .doesNotContainKeys("auto.offset.reset", "enable.auto.commit");
                });
    }
}
