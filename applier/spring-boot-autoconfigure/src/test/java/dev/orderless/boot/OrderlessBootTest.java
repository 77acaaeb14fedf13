package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * A Spring Boot application with a {@link MongoClient}, a {@link CollectionSchema} and properties, nothing
 * else: the auto-configuration declares the queues, applies what arrives, and reports its health. On
 * the embedded broker, or the real RabbitMQ when {@code RABBITMQ_URI} is set (as in CI).
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@DirtiesContext   // closed after this class, while the test backends still run (not at JVM exit)
@SpringBootTest(classes = OrderlessBootTest.App.class, properties = {"spring.main.banner-mode=off",
        "orderless.consumer.backoff.initial=50ms"})
@TestPropertySource("classpath:orderless-boot-example.properties")   // docs/guide/spring-boot.md quotes this file
class OrderlessBootTest {
    private static final String QUEUE = RabbitExtension.uniqueQueue("boot");
    private static final String DATABASE = MongoBackend.freshDatabaseName("boot");
    private static RabbitBackend rabbit;
    private static MongoBackend mongo;
    private static ConnectionFactory publishing;

    @BeforeAll
    static void backends(RabbitBackend rabbitBackend, MongoBackend mongoBackend, ConnectionFactory confirming) {
        rabbit = rabbitBackend;
        mongo = mongoBackend;
        publishing = confirming;
    }

    @DynamicPropertySource
    static void connections(DynamicPropertyRegistry registry) {
        // Boot's properties, as a user sets them (spring.rabbitmq.addresses does not decode a %2F vhost)
        dev.orderless.boot.BootRabbit.properties(registry, () -> rabbit);
        registry.add("orderless.database", () -> DATABASE);
        registry.add("orderless.consumer.queue", () -> QUEUE);
    }

    /** What a user writes: the client and the schema. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean(destroyMethod = "close")
        MongoClient mongoClient() {
            return mongo.newClient();
        }

        // tag::boot[]
        @Bean
        CollectionSchema schema() {   // the entities' sets and registers
            return CollectionSchema.builder().set(SetField.of("classes", "name")).set(SetField.of("clubs", "name"))
                    .register("name").register("city").build();
        }

        @Bean
        OrderlessView byClass() {     // a view, fed under orderless.view.classes.*: each class lists its members
            CollectionSchema byClass = CollectionSchema.builder().set(new SetField("members", "removed_members", "id"))
                    .build();
            return new OrderlessView("classes", "entities", "by_class", byClass, (entity, version) -> {
                String id = entity.getString("_id").getValue();
                List<Operation> ops = new ArrayList<>();
                entity.getArray("classes", new BsonArray()).forEach(c -> ops.add(Operation.add(
                        c.asDocument().getString("name").getValue(), version, "members", id)));
                entity.getArray("deleted_classes", new BsonArray()).forEach(c -> ops.add(Operation.remove(
                        c.asDocument().getString("name").getValue(), version, "members", id)));
                return ops;
            });
        }
        // end::boot[]
    }


    @Autowired
    private MongoClient client;
    @Autowired
    private OrderlessConsumer consumer;
    @Autowired
    private OrderlessConsumerHealth health;
    @Autowired
    private OrderlessFeedersHealth viewsHealth;
    @Autowired
    private OrderlessFeeders feeders;

    @Test
    void properties_alone_declare_the_queues_and_apply_what_arrives() throws Exception {
        Random random = new Random(11);
        List<Operation> history = Histories.operations(Histories.steps(random, 300, 300, 20), "b");
        List<byte[]> bodies = new ArrayList<>();
        Envelope envelope = new Envelope();
        Histories.delivery(history, 0.2, random).forEach(op -> bodies.add(envelope.encode(op)));

        ConfirmedPublisher.publishAll(publishing, QUEUE, bodies);

        MongoCollection<BsonDocument> entities = client.getDatabase(DATABASE).getCollection("entities", BsonDocument.class);
        Map<String, EntityState> expected = new ReferenceModel(Histories.SCHEMA).replay(history);
        Awaitility.await("the collection equals the oracle").atMost(Duration.ofMinutes(1))
                .until(() -> EntityState.readAll(entities.find(), Histories.SCHEMA).equals(expected));
        Awaitility.await("the view equals the projection of the entities").atMost(Duration.ofMinutes(1))
                .until(() -> members(client.getDatabase(DATABASE).getCollection("by_class", BsonDocument.class))
                        .equals(expectedMembers(expected)));
        assertThat(viewsHealth.health().getStatus()).isEqualTo(Status.UP);
        assertThat(viewsHealth.health().getDetails().get("classes")).asInstanceOf(
                org.assertj.core.api.InstanceOfAssertFactories.map(String.class, Object.class))
                .containsEntry("state", "ACTIVE").containsKeys("fence", "lag");
        assertThat(feeders.feeders().get("classes").lag()).hasValueSatisfying(lag ->
                assertThat(lag).as("caught up: behind by at most a few polls").isLessThan(Duration.ofSeconds(30)));
        MongoCollection<BsonDocument> records = client.getDatabase(DATABASE).getCollection("entities_history",
                BsonDocument.class);
        assertThat(records.countDocuments(new BsonDocument("_id.entity", new BsonDocument("$exists",
                org.bson.BsonBoolean.TRUE)))).as("orderless.history.enabled: each operation recorded once (beside"
                + " the baseline's status)").isEqualTo(history.size());
        assertThat(consumer.options()).satisfies(options -> {
            assertThat(options.concurrency()).isEqualTo(2);
            assertThat(options.batchSize()).isEqualTo(20);
        });
    }

    /** class -> entity ids, as the view holds it. */
    private static Map<String, java.util.Set<String>> members(MongoCollection<BsonDocument> view) {
        Map<String, java.util.Set<String>> members = new java.util.TreeMap<>();
        CollectionSchema byClass = CollectionSchema.builder().set(new SetField("members", "removed_members", "id")).build();
        for (EntityState doc : EntityState.readAll(view.find(), byClass).values()) {
            java.util.Set<String> ids = doc.live().getOrDefault("members", Map.of()).keySet();
            if (!ids.isEmpty()) {
                members.put(doc.entity(), new java.util.TreeSet<>(ids));
            }
        }
        return members;
    }

    private static Map<String, java.util.Set<String>> expectedMembers(Map<String, EntityState> entities) {
        Map<String, java.util.Set<String>> members = new java.util.TreeMap<>();
        entities.values().forEach(e -> e.live().getOrDefault("classes", Map.of()).keySet().forEach(c ->
                members.computeIfAbsent(c, k -> new java.util.TreeSet<>()).add(e.entity())));
        return members;
    }

    @Test
    void the_spring_boot_guide_quotes_the_example_properties_and_beans_verbatim() throws Exception {
        String readme = Files.readString(Path.of("../../docs/guide/spring-boot.md"), StandardCharsets.UTF_8);
        String properties = Files.readString(Path.of("src/test/resources/orderless-boot-example.properties"),
                StandardCharsets.UTF_8);
        Matcher region = Pattern.compile("// tag::boot\\[]\\n(.*?)\\n\\s*// end::boot\\[]", Pattern.DOTALL)
                .matcher(Files.readString(Path.of("src/test/java/dev/orderless/boot/OrderlessBootTest.java"),
                        StandardCharsets.UTF_8));

        assertThat(region.find()).isTrue();
        assertThat(readme).as("the Spring Boot guide quotes the boot region of OrderlessBootTest (change both together)")
                .contains("```java\n" + region.group(1).stripIndent() + "\n```");
        assertThat(readme).as("the Spring Boot guide quotes orderless-boot-example.properties (change both together)")
                .contains("```properties\n" + properties.strip() + "\n```");
    }

    @Test
    void views_health_is_down_once_the_feeders_stop_and_up_again_once_they_run() {
        Awaitility.await("the feeder is active").atMost(Duration.ofSeconds(30))
                .until(() -> viewsHealth.health().getStatus().equals(Status.UP));

        feeders.stop();
        try {
            assertThat(viewsHealth.health().getStatus()).isEqualTo(Status.DOWN);
            assertThat(viewsHealth.health().getDetails()).containsEntry("classes", Map.of("state", "NOT_RUNNING"));
        } finally {
            feeders.start();
        }
        Awaitility.await("the feeder is back").atMost(Duration.ofSeconds(30))
                .until(() -> viewsHealth.health().getStatus().equals(Status.UP));
    }

    @Test
    void health_is_up_while_consuming_and_down_once_stopped() {
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
        assertThat(health.health().getDetails()).containsEntry("queue", QUEUE).containsEntry("deadLetterQueue",
                QUEUE + ".dlq").containsEntry("retrying", 0);
        Awaitility.await("the dead-letter depth, read in the background").atMost(Duration.ofSeconds(10))
                .until(() -> Long.valueOf(0).equals(health.health().getDetails().get("deadLetters")));

        consumer.stop();
        try {
            assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
        } finally {
            consumer.start();
        }
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
    }
}
