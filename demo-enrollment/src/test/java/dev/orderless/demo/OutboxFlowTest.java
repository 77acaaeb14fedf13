package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoClient;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The demo's web application recording through the outbox, and its relays as real OS processes: the
 * broker stopped while actions are recorded (on a real RabbitMQ here, {@code rabbitmqctl stop_app}), a
 * relay killed with SIGKILL mid-drain, two relays at once. Every action is published at least once, the
 * students converge with nothing lost, and the outbox ends empty.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OutboxFlowTest {

    @Test
    void with_rabbitmq_stopped_the_web_app_records_1000_actions_and_the_relay_drains_them_when_it_is_back(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf, MongoClient client) throws Exception {
        String database = "outbox_stopped_" + System.nanoTime();
        String queue = RabbitExtension.uniqueQueue("outbox");
        Path logs = Files.createDirectories(Path.of("target", "outbox-flow"));
        MongoCollection<BsonDocument> outbox = client.getDatabase(database)
                .getCollection(Enrollment.OUTBOX, BsonDocument.class);
        try (BrokerOutage outage = BrokerOutage.of(rabbit)) {
            List<String> place = place(mongo, outage.uri(), database, queue);
            Process relay = DemoProcess.start(Map.of(), logs.resolve("relay-through-outage.log"), args("relay", place));
            try {
                Awaitility.await("the relay running").atMost(Duration.ofSeconds(60))
                        .until(() -> lines(logs.resolve("relay-through-outage.log")).stream()
                                .anyMatch(l -> l.startsWith("relay: publishing")));
                outage.stop();
                System.out.println("[outbox] " + outage.description());
                CliRun direct = CliRun.of(Map.of(), args("publish", place, "--ops", "10"));
                assertThat(direct.exit()).as("a direct publish needs the broker: %s", direct.err()).isEqualTo(1);

                CliRun recorded = CliRun.of(Map.of(), args("publish", place, "--outbox", "--ops", "1000"));
                assertThat(recorded.exit()).as(recorded.err()).isZero();
                assertThat(recorded.err()).isEmpty();
                assertThat(recorded.out()).contains("RECORDED actions=1000");
                assertThat(outbox.countDocuments()).as("nothing published while the broker is away").isEqualTo(1000);
                Awaitility.await("the relay backing off, saying why").atMost(Duration.ofSeconds(60))
                        .until(() -> lines(logs.resolve("relay-through-outage.log")).stream()
                                .anyMatch(l -> l.startsWith("  relay is BACKING_OFF: RabbitMQ did not take")));

                outage.start();
                Awaitility.await("the relay drains the outbox").atMost(Duration.ofMinutes(2))
                        .until(() -> outbox.countDocuments() == 0);
                assertThat(lines(logs.resolve("relay-through-outage.log"))).contains("  relay is RUNNING");
            } finally {
                relay.destroy();   // SIGTERM: a graceful stop
                relay.waitFor(30, TimeUnit.SECONDS);
                relay.destroyForcibly();
            }
            assertConverged(place, cf, queue);
        }
    }

    @Test
    void a_relay_killed_with_sigkill_mid_drain_and_a_second_relay_at_once_still_publish_every_action(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf, MongoClient client) throws Exception {
        String database = "outbox_killed_" + System.nanoTime();
        String queue = RabbitExtension.uniqueQueue("outbox");
        Path logs = Files.createDirectories(Path.of("target", "outbox-flow"));
        List<String> place = place(mongo, rabbit.uri().toString(), database, queue);
        MongoCollection<BsonDocument> outbox = client.getDatabase(database)
                .getCollection(Enrollment.OUTBOX, BsonDocument.class);
        CliRun recorded = CliRun.of(Map.of(), args("publish", place, "--outbox", "--ops", "1500"));
        assertThat(recorded.exit()).as(recorded.err()).isZero();

        Process victim = DemoProcess.start(Map.of(), logs.resolve("victim.log"),
                args("relay", place, "--batch", "50", "--claim-ttl", "3"));
        Process survivor = DemoProcess.start(Map.of(), logs.resolve("survivor.log"),
                args("relay", place, "--batch", "50", "--claim-ttl", "3", "--exit-when-empty", "3"));
        try {
            Awaitility.await("draining").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10))
                    .until(() -> outbox.countDocuments() < 1500);
            victim.destroyForcibly();   // SIGKILL: its claims stay until they expire
            assertThat(victim.waitFor(30, TimeUnit.SECONDS)).isTrue();
            long left = outbox.countDocuments();
            System.out.printf("[outbox] killed one of two relays with %d of 1500 entries left%n", left);
            assertThat(left).as("killed mid-drain").isPositive();

            assertThat(survivor.waitFor(3, TimeUnit.MINUTES)).as("the survivor drains and exits").isTrue();
            assertThat(survivor.exitValue()).isZero();
            assertThat(outbox.countDocuments()).as("the outbox ends empty").isZero();
            System.out.println("[outbox] survivor: " + lines(logs.resolve("survivor.log")).stream()
                    .filter(l -> l.startsWith("RELAYED")).findFirst().orElse("?"));
        } finally {
            victim.destroyForcibly();
            survivor.destroyForcibly();
        }
        assertConverged(place, cf, queue);
    }

    /** The consumers apply the queue; verify compares every student with the oracle of what was recorded. */
    private static void assertConverged(List<String> place, ConnectionFactory cf, String queue) {
        try {
            CliRun consume = CliRun.of(Map.of(), args("consume", place, "--exit-when-idle", "3"));
            assertThat(consume.exit()).as(consume.err()).isZero();
            CliRun verify = CliRun.of(Map.of(), args("verify", place));
            System.out.println("[outbox] " + verify.result());
            assertThat(verify.result()).contains("converged=true", "lost=0", "rosters_consistent=true");
            assertThat(verify.exit()).isZero();
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    private static List<String> place(MongoBackend mongo, String rabbit, String database, String queue) {
        return List.of("--mongo", mongo.connectionString(), "--rabbit", rabbit, "--database", database, "--queue", queue);
    }

    private static String[] args(String command, List<String> place, String... more) {
        List<String> all = new ArrayList<>(List.of(command));
        all.addAll(place);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    private static List<String> lines(Path log) {
        try {
            return Files.exists(log) ? Files.readAllLines(log) : List.of();
        } catch (java.io.IOException e) {
            return List.of();
        }
    }
}
