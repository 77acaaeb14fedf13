package dev.orderless.testing.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The node of {@link EmbeddedKafka} as a child JVM ({@code java -cp} this JVM's class path), for tests that kill
 * the broker hard: {@link #kill()} is a SIGKILL (nothing flushed, no clean shutdown), {@link #startAgain()} starts
 * it again on the same ports and logs, recovering what was written. A shutdown hook kills the child, so it never
 * outlives the test JVM.
 *
 * <p>Slower than {@link EmbeddedKafka}: a start takes a JVM's start-up and Kafka's (seconds), and a start after a
 * kill waits for the node's recovery as well (about 7 s measured). The child runs with {@code -Xmx256m}; its output
 * goes to {@code broker.log} in its directory ({@link #logFile()}), at WARN when it logs with Logback.
 */
public final class KafkaProcess implements KafkaBroker {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);

    private final KafkaNode node;
    private final Thread killer;
    private volatile Process process;
    private int launches;
    private boolean closed;

    private KafkaProcess(KafkaNode node) {
        this.node = node;
        // unsynchronised: the JVM may be exiting while a thread holds this object's lock (waiting for a start)
        this.killer = new Thread(() -> {
            Process running = process;
            if (running != null) {
                running.destroyForcibly();
            }
            node.deleteDir();
        }, "orderless-kafka-process-killer");
    }

    /** Starts a child broker with {@link KafkaSettings#ofDefaults()}. */
    public static KafkaProcess start() {
        return start(KafkaSettings.ofDefaults());
    }

    /**
     * Starts a child broker with {@code settings}, returning once it answers clients.
     *
     * @throws IllegalStateException if it does not start, saying in one line what to check
     */
    public static KafkaProcess start(KafkaSettings settings) {
        KafkaNode node = KafkaNode.create(settings);
        node.writeProperties();
        writeLogbackConfig(node);
        KafkaProcess kafka = new KafkaProcess(node);
        return KafkaNode.firstStart(kafka, kafka.killer, kafka::startAgain);
    }

    @Override
    public String bootstrapServers() {
        return node.bootstrapServers();
    }

    /** The settings the broker runs with. */
    public KafkaSettings settings() {
        return node.settings();
    }

    /** Where the child's output goes (deleted with the rest on {@link #close()}). */
    public Path logFile() {
        return node.dir().resolve("broker.log");
    }

    /** Whether the child process is alive. */
    public synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** The child's process id, while it runs (to signal it otherwise than {@link #kill()} does). */
    public synchronized long pid() {
        if (process == null) {
            throw new IllegalStateException("the Kafka process is not running");
        }
        return process.pid();
    }

    /**
     * Kills the child with SIGKILL and waits for it to be gone; its ports and logs are kept for
     * {@link #startAgain()}. Does nothing if it is not running.
     */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        try {
            process.destroyForcibly();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the Kafka process " + process.pid() + " did not die within 30 s"
                        + " of a SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted killing the Kafka process " + process.pid(), e);
        } finally {
            process = null;
        }
    }

    /**
     * Starts the child again after {@link #kill()} (or for the first time), on the same ports and logs; returns once
     * it answers clients. Does nothing if it is running.
     *
     * @throws IllegalStateException if it was closed, or does not start (saying in one line what to check)
     */
    public synchronized void startAgain() {
        if (closed) {
            throw new IllegalStateException("this Kafka process was closed; start another with KafkaProcess.start()");
        }
        if (isAlive()) {
            return;
        }
        launches++;
        Path ready = node.dir().resolve("ready-" + launches);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.add("-XX:+UseSerialGC");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-Dlogback.configurationFile=" + node.dir().resolve("logback.xml"));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(KafkaProcessMain.class.getName());
        command.add(node.propertiesFile().toString());
        command.add(ready.toString());
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile())).start();
        } catch (IOException e) {
            throw new IllegalStateException("the Kafka process did not start (" + e.getMessage() + "): check that "
                    + command.get(0) + " runs", e);
        }
        Process launched = process;
        try {
            long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
            while (!Files.exists(ready)) {
                if (!launched.isAlive() || System.nanoTime() > deadline) {
                    throw new TimeoutException(launched.isAlive() ? "not ready in " + READY_TIMEOUT.toSeconds() + " s"
                            : "exited with " + launched.exitValue());
                }
                Thread.sleep(50); // polling the child's ready file, bounded by the deadline
            }
            node.awaitReady(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), launched::isAlive);
        } catch (TimeoutException | InterruptedException | RuntimeException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            kill();
            throw new IllegalStateException("the Kafka process on " + bootstrapServers() + " did not start (" + e
                    .getMessage() + "): see its log " + logFile() + " (last line: " + lastLine() + ")", e);
        }
    }

    private String lastLine() {
        try {
            List<String> lines = Files.readAllLines(logFile(), StandardCharsets.UTF_8);
            return lines.isEmpty() ? "none" : lines.get(lines.size() - 1);
        } catch (IOException e) {
            return "unreadable: " + e.getMessage();
        }
    }

    /** Kills the child (SIGKILL: a test broker has nothing worth flushing) and deletes its logs. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            kill();
        } finally {
            node.deleteDir();
            KafkaNode.removeHook(killer);
        }
    }

    private static void writeLogbackConfig(KafkaNode node) {
        String config = """
                <configuration>
                  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern></encoder>
                  </appender>
                  <root level="WARN"><appender-ref ref="OUT"/></root>
                </configuration>
                """;
        try {
            Files.writeString(node.dir().resolve("logback.xml"), config);
        } catch (IOException e) {
            throw new UncheckedIOException("Kafka: cannot write its logging configuration in " + node.dir(), e);
        }
    }

    @Override
    public String toString() {
        return "KafkaProcess[" + bootstrapServers() + (isAlive() ? "" : ", not running") + "]";
    }
}
