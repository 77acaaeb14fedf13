package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.EntityState;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.history.History;
import dev.orderless.history.Versions;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.util.Map;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

@ExtendWith({MongoExtension.class, RabbitExtension.class})
class DemoRunTest {

    @Test
    void a_shuffled_duplicated_poisoned_run_ends_converged_with_nothing_lost(MongoBackend mongo, RabbitBackend rabbit,
                                                                            ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("demo");
        String database = MongoBackend.freshDatabaseName("demo");
        try {
            CliRun run = CliRun.of(Map.of(), "run", "--ops", "3000", "--students", "80", "--classes", "8",
                    "--consumers", "4", "--shuffle", "--duplicate-rate", "0.2", "--poison", "9", "--seed", "11",
                    "--mongo", mongo.connectionString(), "--rabbit", rabbit.uri().toString(),
                    "--database", database, "--queue", queue);

            System.out.println("[demo] " + run.result());
            assertThat(run.result()).contains("converged=true", "diverged=0", "dead_lettered=9", "lost=0",
                    "rosters_consistent=true", "credits_diverged=0", "status_diverged=0");
            assertThat(run.out()).contains("each student's sum the oracle's: yes");
            assertThat(run.exit()).isZero();

            CliRun verify = CliRun.of(Map.of("MONGODB_URI", mongo.connectionString(), "RABBITMQ_URI",
                    rabbit.uri().toString()), "verify", "--database", database, "--queue", queue, "--wait", "30");
            assertThat(verify.result()).as("verify after run, from the record run left")
                    .contains("converged=true", "diverged=0", "lost=0", "rosters_consistent=true");
            assertThat(verify.exit()).isZero();
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    @Test
    void a_run_with_history_records_every_action_and_history_prints_a_students_versions(MongoBackend mongo,
                                                                                         RabbitBackend rabbit,
                                                                                         ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("demo");
        String database = MongoBackend.freshDatabaseName("demo");
        try {
            CliRun run = CliRun.of(Map.of(), "run", "--ops", "600", "--students", "20", "--classes", "5",
                    "--shuffle", "--duplicate-rate", "0.2", "--history", "--mongo", mongo.connectionString(),
                    "--rabbit", rabbit.uri().toString(), "--database", database, "--queue", queue);

            assertThat(run.out()).contains("history         600 records (600 actions); the last version of 20 students"
                    + " equals their documents");
            assertThat(run.exit()).isZero();

            CliRun history = CliRun.of(Map.of("MONGODB_URI", mongo.connectionString()), "history", "--student",
                    "student-3", "--database", database);
            assertThat(history.out()).startsWith("student-3: ").contains("seq", "after it: classes | name | credits | status");
            assertThat(history.out().lines().filter(line -> line.matches("\\d+ +\\d{4}-.*"))).isNotEmpty();
            assertThat(history.out()).as("the student's credits and status among its versions")
                    .containsPattern("credits [+-]\\d").contains("status APPLIED");
            assertThat(history.exit()).isZero();
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    @Test
    void chaos_replays_the_history_a_run_exported_and_converges_with_a_consumer_killed(MongoBackend mongo,
            RabbitBackend rabbit, ConnectionFactory cf, @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        String queue = RabbitExtension.uniqueQueue("demo");
        String database = MongoBackend.freshDatabaseName("demo");
        java.nio.file.Path exported = dir.resolve("students.jsonl");
        try {
            CliRun run = CliRun.of(Map.of(), "run", "--ops", "800", "--students", "30", "--classes", "6",
                    "--shuffle", "--history", "--export-history", exported.toString(), "--mongo",
                    mongo.connectionString(), "--rabbit", rabbit.uri().toString(), "--database", database,
                    "--queue", queue);
            assertThat(run.out()).contains("exported 800 recorded actions to " + exported);

            CliRun chaos = CliRun.of(Map.of(), "chaos", "--history", exported.toString(), "--seed", "5", "--mongo",
                    mongo.connectionString(), "--rabbit", rabbit.uri().toString());

            System.out.println(chaos.out());
            assertThat(chaos.out()).containsPattern("\\[chaos\\] students.jsonl +800 +\\d+ +consumer killed +0 +0 +0 ");
            assertThat(chaos.exit()).isZero();
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    @Test
    void consume_with_history_on_students_consumed_without_it_records_what_it_applies_and_takes_the_students_in(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("demo");
        String database = MongoBackend.freshDatabaseName("demo");
        Map<String, String> env = Map.of("MONGODB_URI", mongo.connectionString(), "RABBITMQ_URI", rabbit.uri().toString());
        try {
            assertThat(CliRun.of(env, "publish", "--ops", "150", "--students", "8", "--database", database, "--queue",
                    queue).exit()).isZero();
            assertThat(CliRun.of(env, "consume", "--exit-when-idle", "2", "--database", database, "--queue", queue)
                    .exit()).isZero();
            assertThat(CliRun.of(env, "publish", "--ops", "50", "--students", "8", "--database", database, "--queue",
                    queue).exit()).isZero();

            CliRun consume = CliRun.of(env, "consume", "--history", "--exit-when-idle", "2", "--database", database,
                    "--queue", queue);

            assertThat(consume.exit()).as(consume.err()).isZero();
            try (var client = mongo.newClient()) {
                var db = client.getDatabase(database);
                assertThat(db.getCollection(Enrollment.STUDENTS_HISTORY).countDocuments(new BsonDocument("_id.seq",
                        new BsonDocument("$gt", new org.bson.BsonInt64(0))))).as("one record per action since")
                        .isEqualTo(50);
                History history = History.of(db.getCollection(Enrollment.STUDENTS_HISTORY, BsonDocument.class),
                        Enrollment.STUDENT_SCHEMA).withLive(db.getCollection(Enrollment.STUDENTS, BsonDocument.class));
                Map<String, EntityState> students = EntityState.readAll(
                        db.getCollection(Enrollment.STUDENTS, BsonDocument.class).find(), Enrollment.STUDENT_SCHEMA);
                assertThat(students).hasSize(8);
                students.forEach((student, document) -> {
                    Versions versions = history.versions(student);
                    assertThat(versions.baseline()).as("%s was taken in by the baseline", student).isTrue();
                    long last = versions.versions().isEmpty() ? versions.horizon()
                            : versions.versions().get(versions.versions().size() - 1).seq();
                    assertThat(history.asOf(student, last).value()).as("%s as of seq %d", student, last)
                            .contains(document);
                });
            }
            CliRun printed = CliRun.of(Map.of("MONGODB_URI", mongo.connectionString()), "history", "--student",
                    "student-3", "--database", database);
            assertThat(printed.out()).contains("before the history was on are known as the state the baseline took");
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }
}
