package dev.orderless.testing.kafka;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.utils.Time;

/**
 * A real Kafka 4.2 node in this JVM: one KRaft broker and controller, share groups on, on free ports of
 * 127.0.0.1, its logs in a temporary directory that {@link #close()} deletes. It takes a few seconds to start the
 * first time in a JVM and under one to restart; share one per test class ({@link KafkaExtension}).
 *
 * <p>{@link #restart()} (or {@link #stop()} then {@link #startAgain()}) stops the node cleanly and starts it again
 * on the same ports and logs: topics, records, committed share-group state and group configurations are kept, and
 * clients reconnect on their own. For a broker killed hard, see {@link KafkaProcess}.
 *
 * <p>Kafka logs a lot at INFO, through SLF4J, under the loggers {@code kafka} and {@code org.apache.kafka}: set
 * those to WARN in the tests' logging configuration (for Logback, in {@code src/test/resources/logback-test.xml}:
 * {@code <logger name="kafka" level="WARN"/>} and {@code <logger name="org.apache.kafka" level="WARN"/>}).
 */
public final class EmbeddedKafka implements KafkaBroker {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private final KafkaNode node;
    private final Thread cleanUp;
    private KafkaRaftServer server;
    private boolean closed;

    private EmbeddedKafka(KafkaNode node) {
        this.node = node;
        // a test that forgets close() must not leave its logs in the temporary directory
        this.cleanUp = new Thread(node::deleteDir, "orderless-kafka-cleanup");
    }

    /** Starts a node with {@link KafkaSettings#ofDefaults()}. */
    public static EmbeddedKafka start() {
        return start(KafkaSettings.ofDefaults());
    }

    /**
     * Starts a node with {@code settings}, returning once it answers clients.
     *
     * @throws IllegalStateException if it does not start, saying in one line what to check
     */
    public static EmbeddedKafka start(KafkaSettings settings) {
        EmbeddedKafka kafka = new EmbeddedKafka(KafkaNode.create(settings));
        return KafkaNode.firstStart(kafka, kafka.cleanUp, kafka::startAgain);
    }

    @Override
    public String bootstrapServers() {
        return node.bootstrapServers();
    }

    /** The settings the node runs with. */
    public KafkaSettings settings() {
        return node.settings();
    }

    /** The node's directory (its logs), deleted on {@link #close()}. */
    Path directory() {
        return node.dir();
    }

    /** Whether the node is running (started and neither stopped nor closed). */
    public synchronized boolean isRunning() {
        return server != null;
    }

    /**
     * Stops the node and starts it again on the same ports and logs; what it stored is kept. Returns once it answers
     * clients again.
     */
    public synchronized void restart() {
        stop();
        startAgain();
    }

    /**
     * Stops the node cleanly (its logs flushed), keeping its ports and logs for {@link #startAgain()}; clients see
     * it gone until then. Does nothing if it is stopped already.
     */
    public synchronized void stop() {
        if (server == null) {
            return;
        }
        try {
            server.shutdown();
            server.awaitShutdown();
        } finally {
            server = null;
        }
    }

    /**
     * Starts the node again after {@link #stop()} (or for the first time), on the same ports and logs; returns once
     * it answers clients. Does nothing if it is running.
     *
     * @throws IllegalStateException if it was closed, or does not start (saying in one line what to check)
     */
    public synchronized void startAgain() {
        if (closed) {
            throw new IllegalStateException("this embedded Kafka was closed; start another with EmbeddedKafka.start()");
        }
        if (server != null) {
            return;
        }
        Properties properties = node.properties();
        KafkaRaftServer started = null;
        try {
            if (!KafkaNode.formatted(properties)) {
                KafkaNode.format(properties);
            }
            started = new KafkaRaftServer(KafkaConfig.fromProps(properties), Time.SYSTEM);
            started.startup();
            node.awaitReady(READY_TIMEOUT, () -> true);
            server = started;
        } catch (Exception | LinkageError e) {
            if (started != null) {
                stopQuietly(started);
            }
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("embedded Kafka did not start on " + bootstrapServers() + " ("
                    + KafkaNode.rootCause(e) + "): check that one version of Kafka's broker jars (kafka_2.13,"
                    + " kafka-server, kafka-metadata, kafka-raft, kafka-storage, kafka-group-coordinator,"
                    + " kafka-share-coordinator) is on the test classpath and that " + node.dir()
                    + " is writable; its log is under the loggers kafka and org.apache.kafka", e);
        }
    }

    private static void stopQuietly(KafkaRaftServer server) {
        try {
            server.shutdown();
            server.awaitShutdown();
        } catch (RuntimeException e) {
            // the start failed, which is what is reported
        }
    }

    /** Stops the node and deletes its logs. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stop();
        } finally {
            node.deleteDir();
            KafkaNode.removeHook(cleanUp);
        }
    }

    @Override
    public String toString() {
        return "EmbeddedKafka[" + bootstrapServers() + (isRunning() ? "" : ", stopped") + "]";
    }
}
