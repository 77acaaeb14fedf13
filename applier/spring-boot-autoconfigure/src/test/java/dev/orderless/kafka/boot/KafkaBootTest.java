package dev.orderless.kafka.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.boot.OrderlessAutoConfiguration;
import dev.orderless.kafka.KafkaOperationPublisher;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.kafka.KafkaBroker;
import dev.orderless.testing.kafka.KafkaExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The Kafka consumer a Spring Boot application gets from {@code orderless.kafka.*} and {@code spring.kafka.*}, on a
 * real Kafka broker (KRaft, in the JVM) and the embedded MongoDB: it declares its topic, applies what is published, and
 * its health follows its consumers.
 */
@Tag("kafka")
@ExtendWith({MongoExtension.class, KafkaExtension.class})
class KafkaBootTest {
    private static final AtomicInteger NAMES = new AtomicInteger();

    @Test
    void a_context_with_orderless_kafka_properties_applies_a_published_envelope_and_its_health_is_up(
            KafkaBroker broker, MongoBackend mongo) {
        String topic = "boot.ops." + NAMES.incrementAndGet();
        String database = MongoBackend.freshDatabaseName("kafka_boot");
        MeterRegistry meters = new SimpleMeterRegistry();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class, KafkaAutoConfiguration.class,
                        OrderlessKafkaAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withBean(MeterRegistry.class, () -> meters)
                .withPropertyValues("spring.kafka.bootstrap-servers=" + broker.bootstrapServers(),
                        // a consumer group's setting a share consumer refuses: left out, not a failed start
                        "spring.kafka.consumer.auto-offset-reset=earliest",
                        "orderless.database=" + database, "orderless.collection=entities",
                        "orderless.kafka.topic=" + topic, "orderless.kafka.group=boot-" + NAMES.get(),
                        "orderless.kafka.concurrency=2", "orderless.kafka.backoff.initial=50ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    OrderlessKafkaConsumer consumer = context.getBean(OrderlessKafkaConsumer.class);
                    OrderlessKafkaHealth health = context.getBean(OrderlessKafkaHealth.class);
                    assertThat(consumer.options().concurrency()).isEqualTo(2);

                    // published before any consumer polled: the declared share group reads from the earliest record
                    try (KafkaOperationPublisher publisher = KafkaOperationPublisher.start(
                            Map.of("bootstrap.servers", broker.bootstrapServers()), topic)) {
                        publisher.publish(Operation.assign("s-1", 3, "name", new BsonString("Ada")));
                    }

                    MongoCollection<BsonDocument> entities = context.getBean(MongoClient.class).getDatabase(database)
                            .getCollection("entities", BsonDocument.class);
                    Awaitility.await("the envelope applied").atMost(Duration.ofSeconds(30)).until(() ->
                            entities.find(new BsonDocument("_id", new BsonString("s-1"))).first() != null);
                    assertThat(entities.find().first().getString("name").getValue()).isEqualTo("Ada");
                    assertThat(meters.find("orderless.consume.outcomes").tag("queue", topic).counters())
                            .as("the application's registry").isNotEmpty();
                    Health up = health.health();
                    assertThat(up.getStatus()).isEqualTo(Status.UP);
                    assertThat(up.getDetails()).containsEntry("topic", topic).containsEntry("deadLetterTopic",
                            topic + ".dlt").containsEntry("concurrency", 2).containsKey("deliveryCountLimit")
                            .doesNotContainKey("waitingFor");

                    consumer.stop();

                    assertThat(health.health().getStatus()).as("closed with the context's stop").isEqualTo(Status.DOWN);
                });
    }

    @Test
    void health_is_down_naming_the_topic_while_its_consumers_are_dead_and_up_once_the_watch_restarted_them(
            KafkaBroker broker, MongoDatabase db) {
        String topic = "boot.watch." + NAMES.incrementAndGet();
        Map<String, Object> kafka = Map.of("bootstrap.servers", broker.bootstrapServers());
        ShareConsumerOptions options = ShareConsumerOptions.ofDefaults(topic, "watch-" + NAMES.get());
        GuardedApplier applier = GuardedApplier.create(db.getCollection("entities", BsonDocument.class), Histories.SCHEMA);
        AtomicReference<ShareGroupConsumer> started = new AtomicReference<>();
        OrderlessKafkaConsumer consumer = new OrderlessKafkaConsumer(kafka, options, OptionalInt.of(1), () -> {
            started.set(ShareGroupConsumer.builder(kafka, applier).options(options).start());
            return started.get();
        }, Optional::empty);
        consumer.watchEvery(Duration.ofHours(1));   // the test calls the watch itself
        OrderlessKafkaHealth health = new OrderlessKafkaHealth(consumer);
        consumer.start();
        try {
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            ShareGroupConsumer first = started.get();

            first.close();   // as if its threads had ended on their own

            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat((String) down.getDetails().get("waitingFor")).contains("its consumers of '" + topic + "' stopped");

            consumer.watch();

            assertThat(started.get()).as("a new consumer").isNotSameAs(first);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
        } finally {
            consumer.stop();
        }
    }
}
