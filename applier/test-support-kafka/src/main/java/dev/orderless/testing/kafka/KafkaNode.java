package dev.orderless.testing.kafka;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * One single-node KRaft cluster's fixed parts: its ports, its directory and its configuration. The same node is
 * run in this JVM ({@link EmbeddedKafka}) or in a child one ({@link KafkaProcess}), and restarted on the same ports
 * and logs, so what it stored survives a restart.
 */
record KafkaNode(Path dir, int brokerPort, int controllerPort, KafkaSettings settings) {
    static final String HOST = "127.0.0.1";
    private static final int NODE_ID = 1;

    /** A new node on free ports, in a new temporary directory. */
    static KafkaNode create(KafkaSettings settings) {
        int[] ports = freePorts(2);
        try {
            return new KafkaNode(Files.createTempDirectory("orderless-kafka-"), ports[0], ports[1], settings);
        } catch (IOException e) {
            throw new UncheckedIOException("Kafka: no temporary directory for its logs: check java.io.tmpdir ("
                    + System.getProperty("java.io.tmpdir") + ")", e);
        }
    }

    /** Reads a node back from the server.properties a {@link #writeProperties()} wrote (in a child process). */
    static Properties readProperties(Path file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        }
        return p;
    }

    String bootstrapServers() {
        return HOST + ":" + brokerPort;
    }

    Path logDir() {
        return dir.resolve("logs");
    }

    Path propertiesFile() {
        return dir.resolve("server.properties");
    }

    /** The broker's configuration: everything for one node, internal topics of one replica and one partition. */
    Properties properties() {
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", String.valueOf(NODE_ID));
        p.put("controller.quorum.voters", NODE_ID + "@" + HOST + ":" + controllerPort);
        p.put("listeners", "PLAINTEXT://" + HOST + ":" + brokerPort + ",CONTROLLER://" + HOST + ":" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://" + HOST + ":" + brokerPort);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("log.dirs", logDir().toString());
        p.put("metadata.log.dir", logDir().toString());
        // one node: every internal topic has one replica; one partition each, as creating the default 50 costs
        // seconds at a group's first use
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "1");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("share.coordinator.state.topic.num.partitions", "1");
        p.put("num.partitions", String.valueOf(settings.defaultPartitions()));
        p.put("group.initial.rebalance.delay.ms", "0");
        // a restarted node fences its previous incarnation within seconds, not the default 9 s
        p.put("broker.session.timeout.ms", "2000");
        p.put("broker.heartbeat.interval.ms", "500");
        // share groups: the tests' timeouts, with the broker's bounds moved to admit them
        long lock = settings.recordLockDuration().toMillis();
        p.put("group.share.record.lock.duration.ms", String.valueOf(lock));
        p.put("group.share.min.record.lock.duration.ms", String.valueOf(Math.min(lock, 1000)));
        p.put("group.share.max.record.lock.duration.ms", String.valueOf(Math.max(lock, 60_000)));
        p.put("group.share.delivery.count.limit", String.valueOf(settings.deliveryCountLimit()));
        long session = settings.shareSessionTimeout().toMillis();
        p.put("group.share.session.timeout.ms", String.valueOf(session));
        p.put("group.share.min.session.timeout.ms", String.valueOf(Math.min(session, 1000)));
        p.put("group.share.max.session.timeout.ms", String.valueOf(Math.max(session, 60_000)));
        long heartbeat = settings.shareHeartbeatInterval().toMillis();
        p.put("group.share.heartbeat.interval.ms", String.valueOf(heartbeat));
        p.put("group.share.min.heartbeat.interval.ms", String.valueOf(Math.min(heartbeat, 100)));
        p.put("group.share.max.heartbeat.interval.ms", String.valueOf(Math.max(heartbeat, 15_000)));
        // a share group whose state could not be initialised at first (its topic being created) tries again soon
        p.put("group.share.initialize.retry.interval.ms", "1000");
        // small: a test broker, on a machine shared with the tests
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "2");
        p.put("background.threads", "2");
        return p;
    }

    /** Writes {@link #properties()} for a child process. */
    void writeProperties() {
        try (OutputStream out = Files.newOutputStream(propertiesFile())) {
            properties().store(out, "orderless test broker");
        } catch (IOException e) {
            throw new UncheckedIOException("Kafka: cannot write " + propertiesFile(), e);
        }
    }

    /** Whether the log directory was formatted (a restart finds it so and keeps what it holds). */
    static boolean formatted(Properties p) {
        return Files.exists(Path.of(p.getProperty("metadata.log.dir"), "meta.properties"));
    }

    /** Formats the node's log directory as a new cluster at the latest production metadata version. */
    static void format(Properties p) throws Exception {
        String logDir = p.getProperty("metadata.log.dir");
        new Formatter()
                .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
                .setClusterId(Uuid.randomUuid().toString())
                .setNodeId(Integer.parseInt(p.getProperty("node.id")))
                .setControllerListenerName(p.getProperty("controller.listener.names"))
                .setMetadataLogDirectory(logDir)
                .setDirectories(Set.of(logDir))
                .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
                .run();
    }

    /**
     * Waits until the broker answers a metadata request with itself; throws a TimeoutException past
     * {@code timeout}. Bounded: each attempt is bounded by its own timeout, the loop by the deadline.
     */
    void awaitReady(Duration timeout, java.util.function.BooleanSupplier stillStarting) throws TimeoutException,
            InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 2000,
                AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, 50,
                AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200))) {
            while (System.nanoTime() < deadline && stillStarting.getAsBoolean()) {
                try {
                    if (!admin.describeCluster(new DescribeClusterOptions().timeoutMs(2000)).nodes()
                            .get(3, TimeUnit.SECONDS).isEmpty()) {
                        return;
                    }
                } catch (ExecutionException | TimeoutException e) {
                    last = e;
                }
                Thread.sleep(50); // a poll interval between bounded attempts, not a synchronisation
            }
        }
        TimeoutException t = new TimeoutException("no answer from " + bootstrapServers());
        if (last != null) {
            t.initCause(last);
        }
        throw t;
    }

    /** Deletes the node's directory and all in it; what cannot be deleted is left (a temporary directory). */
    void deleteDir() {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            System.err.println("[orderless tests] Kafka: could not delete all of " + dir + ": " + e);
        }
    }

    /** {@code count} distinct free ports on 127.0.0.1, all held open at once so none is given twice. */
    static int[] freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST));
                socket.setReuseAddress(true);
                sockets.add(socket);
            }
            return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } catch (IOException e) {
            throw new UncheckedIOException("Kafka: no free port on " + HOST, e);
        } finally {
            for (ServerSocket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // a port we only looked up
                }
            }
        }
    }

    /**
     * A new broker's first start: a shutdown hook cleans up after a test that forgets to close it; a start that fails
     * closes it (deleting its directory) and throws.
     */
    static <B extends KafkaBroker> B firstStart(B broker, Thread cleanUp, Runnable start) {
        Runtime.getRuntime().addShutdownHook(cleanUp);
        try {
            start.run();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    /** Removes a {@link #firstStart} hook once its broker is closed. */
    static void removeHook(Thread cleanUp) {
        try {
            Runtime.getRuntime().removeShutdownHook(cleanUp);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway, finding nothing left to do
        }
    }

    /** The innermost cause's message, for the one-line failure. */
    static String rootCause(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c.getClass().getSimpleName() + (c.getMessage() == null ? "" : ": " + c.getMessage());
    }
}
