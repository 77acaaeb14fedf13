package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * {@code consume --exit-when-idle} exits only when its process holds nothing and the queue is empty, and
 * {@code verify} tells messages still queued from lost ones. The retry is held by force, not by a slow machine: the
 * consume process reaches MongoDB through a proxy that drops every connection carrying a student's write, so every
 * message it was given waits for a retry, unacked (not ready), for as long as the test keeps the drop on.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsumeExitWhenIdleTest {

    @Test
    void a_retry_held_across_the_idle_window_keeps_consume_running_until_it_is_applied_and_nothing_is_lost(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf, @TempDir Path dir) throws Exception {
        String queue = RabbitExtension.uniqueQueue("idle-exit");
        String database = MongoBackend.freshDatabaseName("idle");
        Map<String, String> env = Map.of("MONGODB_URI", mongo.connectionString(), "RABBITMQ_URI", rabbit.uri().toString());
        String[] target = mongo.connectionString().replace("mongodb://", "").split("/")[0].split(":");
        try (TcpProxy proxy = TcpProxy.start(target[0], Integer.parseInt(target[1]))) {
            CliRun publish = CliRun.of(env, "publish", "--ops", "60", "--students", "6", "--database", database,
                    "--queue", queue);
            assertThat(publish.exit()).as(publish.err()).isZero();

            proxy.dropWhenClientSends("student-");   // each apply's connection ends; pings and tallies pass
            Path log = dir.resolve("consume.log");
            Process consume = DemoProcess.start(Map.of("MONGODB_URI", "mongodb://127.0.0.1:" + proxy.port(),
                            "RABBITMQ_URI", rabbit.uri().toString()), log, "consume", "--exit-when-idle", "1",
                    "--database", database, "--queue", queue);
            try {
                Awaitility.await("consume idle past its window while it holds the messages, or its exit")
                        .atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
                        .until(() -> !consume.isAlive() || lines(log).stream().anyMatch(l -> l.contains("not exiting")));
                assertThat(lines(log)).as("consume's output, while every message waits for its retry")
                        .anyMatch(l -> l.startsWith("  idle 1 s, not exiting: "));
                assertThat(consume.isAlive()).as("consume still running with its messages held").isTrue();

                proxy.dropWhenClientSends("");
                assertThat(consume.waitFor(90, TimeUnit.SECONDS)).as("consume exits once applied; see " + log).isTrue();
                assertThat(consume.exitValue()).as(String.join("\n", lines(log))).isZero();
            } finally {
                consume.destroyForcibly();
            }

            CliRun verify = CliRun.of(env, "verify", "--database", database, "--queue", queue, "--wait", "30");
            assertThat(verify.result()).contains("converged=true", "lost=0", "queued=0");
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    @Test
    void verify_calls_effects_of_messages_still_in_the_queue_queued_not_lost(MongoBackend mongo, RabbitBackend rabbit,
                                                                            ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("queued");
        String database = MongoBackend.freshDatabaseName("queued");
        Map<String, String> env = Map.of("MONGODB_URI", mongo.connectionString(), "RABBITMQ_URI", rabbit.uri().toString());
        try {
            CliRun publish = CliRun.of(env, "publish", "--ops", "30", "--students", "3", "--database", database,
                    "--queue", queue);
            assertThat(publish.exit()).as(publish.err()).isZero();
            Awaitility.await("the published messages in the queue").atMost(Duration.ofSeconds(30))
                    .until(() -> new RabbitAdmin(cf).getQueueInfo(queue).getMessageCount() == 30);

            CliRun verify = CliRun.of(env, "verify", "--database", database, "--queue", queue, "--wait", "1");

            assertThat(verify.result()).contains("converged=false", "lost=0", "queued=30");
            assertThat(verify.out()).contains("still queued (30 in the queue): not lost yet");
            assertThat(verify.exit()).as("nothing applied yet is not a success").isEqualTo(1);
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    private static List<String> lines(Path log) throws java.io.IOException {
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }
}
