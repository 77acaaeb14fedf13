package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The README's several-process walk-through, as a newcomer runs it: {@code serve} in the background, its
 * two {@code export} lines, {@code publish} (shuffled, duplicated, poisoned), two {@code consume}
 * processes at once that read the URIs from the environment, then {@code verify}.
 */
class ServeFlowTest {

    @Test
    void serve_publish_two_consumers_then_verify_converges_with_nothing_lost() throws Exception {
        Path logs = Files.createDirectories(Path.of("target", "serve-flow"));
        Process serve = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dlogback.configurationFile=logback.xml", "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "serve", "--mongo-port", "0", "--amqp-port", "0")
                .redirectError(logs.resolve("serve.err").toFile()).start();
        List<Process> consumers = new ArrayList<>();
        try {
            Map<String, String> env = exports(serve);
            assertThat(env).containsOnlyKeys("MONGODB_URI", "RABBITMQ_URI");
            assertThat(env.get("RABBITMQ_URI")).as("RabbitMQ's default virtual host, written as RabbitMQ reads it")
                    .endsWith("/%2F");
            // a second serve --detach on the same ports finds the first and points the shell at it
            java.net.URI mongoUri = java.net.URI.create(env.get("MONGODB_URI"));
            java.net.URI amqpUri = java.net.URI.create(env.get("RABBITMQ_URI"));
            CliRun again = CliRun.of(Map.of(), "serve", "--detach", "--mongo-port", String.valueOf(mongoUri.getPort()),
                    "--amqp-port", String.valueOf(amqpUri.getPort()));
            assertThat(again.exit()).as(again.err()).isZero();
            assertThat(again.out().lines()).containsExactly("export MONGODB_URI=" + env.get("MONGODB_URI"),
                    "export RABBITMQ_URI=" + env.get("RABBITMQ_URI"));

            CliRun publish = CliRun.of(env, "publish", "--ops", "1200", "--shuffle", "--duplicate-rate", "0.2",
                    "--poison", "5", "--seed", String.valueOf(Long.getLong("orderless.seed", System.nanoTime())));
            assertThat(publish.exit()).as(publish.err()).isZero();
            assertThat(publish.out()).contains("PUBLISHED", "actions=1200", "poison=5");

            for (int i = 1; i <= 2; i++) {
                consumers.add(DemoProcess.start(env, logs.resolve("consume-" + i + ".log"), "consume", "--consumers", "2",
                        "--exit-when-idle", "5"));
            }
            for (Process consumer : consumers) {
                assertThat(consumer.waitFor(3, TimeUnit.MINUTES)).as("consume exits when idle").isTrue();
                assertThat(consumer.exitValue()).isZero();
            }
            for (int i = 1; i <= 2; i++) {   // a Boot application inside, but the demo's own story only
                assertThat(java.nio.file.Files.readString(logs.resolve("consume-" + i + ".log")))
                        .contains("consume").doesNotContain(":: Spring Boot ::");
            }

            CliRun verify = CliRun.of(env, "verify", "--wait", "60");
            System.out.println("[serve-flow] " + publish.out().strip() + "\n[serve-flow] " + verify.result());
            assertThat(verify.result()).contains("converged=true", "diverged=0", "lost=0", "dead_lettered=5",
                    "rosters_consistent=true");
            assertThat(verify.exit()).isZero();

            CliRun letters = CliRun.of(env, "dead-letters");
            System.out.println("[serve-flow] " + letters.out().strip().replace("\n", "\n[serve-flow] "));
            assertThat(letters.exit()).as(letters.err()).isZero();
            assertThat(letters.out()).contains("DEAD LETTERS in 'enrollment.ops.dlq': 5", "bad_input");
            CliRun replay = CliRun.of(env, "dead-letters", "replay", "--max", "2");
            assertThat(replay.out()).as(replay.err()).contains("REPLAYED 2 to 'enrollment.ops'");
            assertThat(CliRun.of(env, "dead-letters").out()).contains("DEAD LETTERS in 'enrollment.ops.dlq': 3");
            CliRun park = CliRun.of(env, "dead-letters", "park", "--kind", "bad_input", "--max", "1");
            assertThat(park.out()).as(park.err()).contains("PARKED 1 to 'enrollment.ops.dlq.parked'");
            CliRun purge = CliRun.of(env, "dead-letters", "purge", "--max", "1");
            assertThat(purge.out()).as(purge.err()).contains("PURGED 1 from 'enrollment.ops.dlq'");
            assertThat(CliRun.of(env, "dead-letters").out()).contains("DEAD LETTERS in 'enrollment.ops.dlq': 1");
        } finally {
            consumers.forEach(Process::destroyForcibly);
            serve.destroy();
            if (!serve.waitFor(30, TimeUnit.SECONDS)) {
                serve.destroyForcibly();
            }
        }
    }

    /** The {@code export NAME=value} lines serve prints, as the environment a shell's eval would give. */
    private static Map<String, String> exports(Process serve) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
        Map<String, String> env = new HashMap<>();
        CompletableFuture<Void> read = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < 2; i++) {
                    String line = out.readLine();
                    assertThat(line).as("serve's output").startsWith("export ");
                    String[] pair = line.substring("export ".length()).split("=", 2);
                    env.put(pair[0], pair[1]);
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        read.get(Duration.ofSeconds(60).toSeconds(), TimeUnit.SECONDS);
        return env;
    }
}
