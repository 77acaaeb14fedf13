package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.history.History;
import dev.orderless.history.Read;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code orderless.history.*}: the history bean, its baseline, its retention and its health. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class HistoryBootTest {
    private ApplicationContextRunner runner;

    @BeforeEach
    void setUp(MongoBackend mongo, RabbitBackend rabbit) {
        runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory(rabbit.uri()))
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=students");
    }

    @Test
    void without_history_enabled_there_is_no_history() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(History.class)
                .doesNotHaveBean(OrderlessHistoryRetention.class));
    }

    @Test
    void enabled_it_keeps_the_entity_collections_history_beside_it_and_every_version_by_default() {
        runner.withPropertyValues("orderless.database=" + MongoBackend.freshDatabaseName("HistoryBootTest"),
                "orderless.history.enabled=true").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(History.class).doesNotHaveBean(OrderlessHistoryRetention.class);
            assertThat(context.getBean(History.class).collection().getNamespace().getCollectionName())
                    .isEqualTo("students_history");
            assertThat(context.getBean(OrderlessHistoryHealth.class).health().getStatus()).isEqualTo(Status.UP);
            assertThat(context.getBean(OrderlessHistoryHealth.class).health().getDetails())
                    .containsEntry("retention", "every version kept");
            assertThat(context.getBean(OrderlessHistoryBaseline.class).complete())
                    .as("an empty collection: complete before any consumer could start").isTrue();
        });
    }

    @Test
    void with_a_keep_retention_runs_and_its_collection_can_be_named() {
        runner.withPropertyValues("orderless.history.enabled=true", "orderless.history.collection=audit",
                "orderless.history.retention.keep=30d").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(OrderlessHistoryRetention.class);
            assertThat(context.getBean(History.class).collection().getNamespace().getCollectionName()).isEqualTo("audit");
        });
    }

    @Test
    void a_keep_shorter_than_the_compaction_grace_fails_the_start_naming_both() {
        runner.withPropertyValues("orderless.history.enabled=true", "orderless.history.retention.keep=1d",
                "orderless.compaction.grace=7d").run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageStartingWith("orderless.history.retention.keep (PT24H) is shorter than orderless.compaction.grace"
                        + " (PT168H)"));
    }

    @Test
    void a_keep_that_is_not_positive_fails_the_start_naming_it() {
        runner.withPropertyValues("orderless.history.enabled=true", "orderless.history.retention.keep=0s")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("orderless.history.retention.keep must be a positive duration"));
    }

    @Test
    void enabled_on_a_collection_with_data_it_takes_the_live_documents_in_at_start_and_reads_answer_from_them(
            MongoClient client) {
        String database = MongoBackend.freshDatabaseName("HistoryBootTest");
        MongoCollection<BsonDocument> students = client.getDatabase(database).getCollection("students", BsonDocument.class);
        List<Operation> before = List.of(Operation.add("s1", 1, "classes", "a"), Operation.add("s1", 2, "classes", "b"),
                Operation.assign("s1", 3, "name", new BsonString("Ada")));
        before.forEach(GuardedApplier.create(students, Histories.SCHEMA)::apply);   // consumed without the history

        runner.withPropertyValues("orderless.database=" + database, "orderless.history.enabled=true").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(OrderlessHistoryBaseline.class);
            OrderlessHistoryBaseline baseline = context.getBean(OrderlessHistoryBaseline.class);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(baseline::complete);
            History history = context.getBean(History.class);
            Operation after = Operation.remove("s1", 4, "classes", "a");
            history.recording(context.getBean(GuardedApplier.class)).apply(after);

            List<Operation> all = new ArrayList<>(before);
            all.add(after);
            assertThat(history.asOf("s1", 4).value()).contains(new ReferenceModel(Histories.SCHEMA).replay(all).get("s1"));
            assertThat(history.asOf("s1", 2)).isInstanceOf(Read.Unknowable.class);
            assertThat(context.getBean(OrderlessHistoryHealth.class).health().getDetails())
                    .containsEntry("baseline", "complete");
        });
    }

    /** A database whose students were recorded from their first write, by a version that kept no baseline status. */
    private static String recordedFromTheFirstWrite(MongoClient client, List<Operation> ops) {
        String database = MongoBackend.freshDatabaseName("HistoryBootTest");
        MongoCollection<BsonDocument> students = client.getDatabase(database).getCollection("students", BsonDocument.class);
        History history = History.of(client.getDatabase(database).getCollection("students_history", BsonDocument.class),
                Histories.SCHEMA).withLive(students);
        ops.forEach(history.recording(GuardedApplier.create(students, Histories.SCHEMA))::apply);
        return database;
    }

    @Test
    void unset_where_both_the_collection_and_its_history_have_data_but_no_baseline_began_the_start_fails_asking_which(
            MongoClient client) {
        String database = recordedFromTheFirstWrite(client, List.of(Operation.add("s1", 1, "classes", "a")));

        runner.withPropertyValues("orderless.database=" + database, "orderless.history.enabled=true")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("orderless.history.baseline.enabled must be set: 'students' has documents"
                                + " and 'students_history' has records, but no baseline ever began: false if the history"
                                + " has been on since the collection's first write")
                        .hasMessageContaining("true if it was turned on over existing data"));
    }

    @Test
    void set_to_false_the_baseline_is_declared_complete_without_reading_and_recorded_versions_stay_known(
            MongoClient client) {
        List<Operation> ops = List.of(Operation.add("s1", 1, "classes", "a"),
                Operation.assign("s1", 2, "name", new BsonString("Ada")), Operation.assign("s1", 3, "name",
                        new BsonString("Grace")));
        String database = recordedFromTheFirstWrite(client, ops);

        runner.withPropertyValues("orderless.database=" + database, "orderless.history.enabled=true",
                "orderless.history.baseline.enabled=false").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(OrderlessHistoryBaseline.class).complete()).isTrue();
                    assertThat(context.getBean(History.class).asOf("s1", 2).value())
                            .contains(new ReferenceModel(Histories.SCHEMA).replay(ops.subList(0, 2)).get("s1"));
                    assertThat(context.getBean(OrderlessHistoryHealth.class).health().getDetails())
                            .containsEntry("baseline", "complete");
                });
    }

    @Test
    void with_mongodb_unreachable_at_start_it_starts_down_with_the_consumer_held_back_and_decides_once_mongodb_answers(
            MongoBackend mongo, RabbitBackend rabbit) {
        String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
        try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
             MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port()
                     + "/?directConnection=true&serverSelectionTimeoutMS=1000&connectTimeoutMS=1000")) {
            proxy.cut();   // MongoDB unreachable as the application starts
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                    .withBean(MongoClient.class, () -> client)
                    .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory(rabbit.uri()))
                    .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                    .withPropertyValues("orderless.database=" + MongoBackend.freshDatabaseName("HistoryBootTest"),
                            "orderless.collection=students", "orderless.history.enabled=true",
                            "orderless.consumer.queue=" + RabbitExtension.uniqueQueue("history-down"))
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        OrderlessHistoryHealth health = context.getBean(OrderlessHistoryHealth.class);
                        OrderlessConsumer consumer = context.getBean(OrderlessConsumer.class);
                        assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
                        assertThat(health.health().getDetails()).containsEntry("baseline", "not decided")
                                .hasEntrySatisfying("waitingFor", waiting -> assertThat(waiting.toString())
                                        .startsWith("MongoDB, to decide how the history 'students_history' starts"
                                                + " (orderless.history.baseline.enabled)").contains("unavailable"));
                        assertThat(consumer.isConsuming()).as("none of its writes may predate the decision").isFalse();
                        assertThat(consumer.waitingFor()).hasValueSatisfying(waiting -> assertThat(waiting)
                                .startsWith("the history's start to be decided; it waits for MongoDB"));

                        proxy.restore();

                        OrderlessHistoryBaseline baseline = context.getBean(OrderlessHistoryBaseline.class);
                        Awaitility.await("decided once MongoDB answers").atMost(Duration.ofSeconds(30))
                                .until(baseline::complete);
                        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                        assertThat(health.health().getDetails()).containsEntry("baseline", "complete")
                                .doesNotContainKey("waitingFor");
                        // the consumer's watch starts it at its next look (ConsumerWatchTest)
                    });
        }
    }

    @Test
    void a_history_bean_that_does_not_know_its_live_collection_fails_the_start_naming_with_live(MongoClient client) {
        runner.withPropertyValues("orderless.history.enabled=true", "orderless.history.baseline.enabled=false")
                .withBean(History.class, () -> History.of(client.getDatabase("d").getCollection("students_history",
                        BsonDocument.class), Histories.SCHEMA))
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("orderless.history.enabled: the History bean does not know its live"
                                + " collection").hasMessageContaining("History.withLive(collection)"));
    }

    @Test
    void a_baseline_enabled_that_is_not_true_or_false_fails_the_start_naming_it() {
        runner.withPropertyValues("orderless.history.enabled=true", "orderless.history.baseline.enabled=sometimes")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("Failed to bind properties under 'orderless.history.baseline.enabled'"));
    }
}
