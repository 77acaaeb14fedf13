package com.example.enrollment;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Outcome;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import dev.orderless.view.ViewFeeder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/** README.md's examples: they run, they do what the README says, and the README quotes them verbatim. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ReadmeExamplesTest {
    private static final Path SOURCE = Path.of("src/test/java/com/example/enrollment/ReadmeExamples.java");
    private static final Path GUIDE = Path.of("../docs/guide/apply.md");
    private static final Path WIRING = Path.of("../docs/guide/wiring.md");
    private static final Pattern REGION = Pattern.compile("// tag::([a-z-]+)\\[]\\n(.*?)\\n\\s*// end::\\1\\[]",
            Pattern.DOTALL);

    @Test
    void the_apply_example_ends_as_if_in_seq_order(MongoDatabase db) {
        assertThat(ReadmeExamples.enrollThenLeave(db))
                .containsExactly(Outcome.APPLIED, Outcome.SUPERSEDED, Outcome.DUPLICATE, Outcome.APPLIED);
        EntityState student = EntityState.of(db.getCollection("students", BsonDocument.class).find().first(),
                ReadmeExamples.STUDENTS);
        assertThat(student.live().getOrDefault("classes", Map.of())).isEmpty();
        assertThat(student.registers().get("name").value()).isEqualTo(new BsonString("Ada"));
    }

    @Test
    void the_wiring_examples_carry_an_enrollment_from_the_producer_to_the_roster(MongoBackend mongo, RabbitBackend rabbit)
            throws Exception {
        String queue = RabbitExtension.uniqueQueue("readme");
        CachingConnectionFactory cf = ReadmeExamples.rabbit(rabbit.uri().toString());
        try (MongoClient client = ReadmeExamples.mongo(mongo.connectionString())) {
            MongoDatabase db = client.getDatabase(MongoBackend.freshDatabaseName("readme"));
            StampingPublisher publisher = ReadmeExamples.publisher(db, cf, queue);
            ReadmeExamples.enroll(publisher, "student-17", "CS 101");
            ReadmeExamples.enroll(publisher, "student-18", "CS 101");
            try (OperationConsumer consumer = ReadmeExamples.consume(db, cf, queue);
                 ViewFeeder feeder = ReadmeExamples.feedRosters(db)) {
                Awaitility.await("both students in the CS 101 roster").atMost(Duration.ofSeconds(60))
                        .until(() -> rosterSize(db) == 2);
            }
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
            cf.destroy();
        }
    }

    @Test
    void the_guides_quote_every_tagged_example_verbatim() throws IOException {
        String readme = Files.readString(GUIDE, StandardCharsets.UTF_8) + Files.readString(WIRING, StandardCharsets.UTF_8);
        List<String> tags = new ArrayList<>();
        Matcher region = REGION.matcher(Files.readString(SOURCE, StandardCharsets.UTF_8));
        while (region.find()) {
            tags.add(region.group(1));
            assertThat(readme).as("the guides quote the region '%s' of %s exactly (change both together)",
                    region.group(1), SOURCE).contains("```java\n" + region.group(2).stripIndent() + "\n```");
        }
        assertThat(tags).containsExactly("imports", "connect", "schema", "apply", "producer", "consumer", "view");
    }

    @Test
    void the_history_example_tells_the_name_as_of_a_seq_the_live_document_has_overwritten(MongoDatabase db) {
        assertThat(HistoryExamples.recordThenAsk(db).value()).hasValueSatisfying(state -> assertThat(
                state.registers().get("name").value()).isEqualTo(new org.bson.BsonString("Ada")));
    }

    @Test
    void the_baseline_example_answers_from_the_live_state_on_and_says_it_cannot_tell_below_it(MongoDatabase db) {
        assertThat(HistoryExamples.baselineThenAsk(db, "readme").value()).hasValueSatisfying(state -> {
            assertThat(state.registers().get("name").value()).isEqualTo(new org.bson.BsonString("Grace"));
            assertThat(state.live().get("classes")).containsOnlyKeys("CS 101");
        });
    }

    @Test
    void the_outbox_example_records_and_its_relay_publishes(MongoDatabase db, ConnectionFactory cf) throws Exception {
        String queue = RabbitExtension.uniqueQueue("readme-outbox");
        new RabbitAdmin(cf).declareQueue(new org.springframework.amqp.core.Queue(queue, true, false, false));
        try (var relay = OutboxExamples.recordThenRelay(db, dev.orderless.stamp.HybridLogicalClock.create(1),
                dev.orderless.publish.ConfirmingPublisher.toQueue(cf, queue,
                        dev.orderless.publish.PublisherOptions.ofDefaults()))) {
            Awaitility.await("published").atMost(Duration.ofSeconds(30))
                    .until(() -> new RabbitAdmin(cf).getQueueInfo(queue).getMessageCount() == 1);
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
        }
    }

    private static int rosterSize(MongoDatabase db) {
        BsonDocument roster = db.getCollection("class_rosters", BsonDocument.class).find().first();
        return roster == null ? 0 : roster.getArray("students").size();
    }
}
