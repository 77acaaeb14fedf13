package dev.orderless.demo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.connection.ClusterConnectionMode;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.kafka.KafkaOperationPublisher;
import dev.orderless.kafka.ShareGroupConsumer;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.chaos.ChaosResult;
import dev.orderless.testing.chaos.Fault;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;

/**
 * {@code chaos --broker kafka}: the chaos command's run on a share group. The history, shuffled with duplicates, to a
 * topic of the run's own, applied by {@code --consumers} share-group consumers (two threads each) into a database of
 * the run's own, while the faults that apply to Kafka are injected once each, at a share of the messages handled:
 * <ul>
 *   <li>{@code KILL_CONSUMER} at a quarter: one consumer runs in a JVM of its own and is killed with SIGKILL (what it
 *       acquired comes back when the acquisition lock times out); a new one starts in its place;
 *   <li>{@code CUT_BROKER} at half: the embedded broker restarted (a broker named with --kafka is not the demo's to
 *       restart: refused);
 *   <li>{@code CUT_MONGO} at three quarters: the consumers' MongoDB connections cut for two seconds.
 * </ul>
 * Then every student compared with the sequential oracle, and the same {@code [chaos]} table as on RabbitMQ.
 */
final class KafkaChaos {
    private static final Duration STEP = Duration.ofMinutes(2);
    private static final Duration CUT = Duration.ofSeconds(2);
    /** The share group's acquisition lock: what the killed consumer held comes back after it. */
    private static final Duration LOCK = Duration.ofSeconds(5);
    /** Longer than {@link #LOCK}: records a killed consumer held come back within it. */
    private static final Duration QUIET = Duration.ofSeconds(10);
    private static final int THREADS = 2;

    private final Wiring w;
    private final KafkaSide kafka;

    KafkaChaos(Wiring wiring) {
        this.w = wiring;
        this.kafka = wiring.kafka();
    }

    /** Refuses, before anything starts, a fault the demo cannot inject on this broker. */
    void check(List<Fault> faults) {
        if (faults.contains(Fault.CUT_BROKER) && kafka.embedded().isEmpty()) {
            throw new InvalidConfigurationException("--faults CUT_BROKER restarts the embedded Kafka broker; a broker"
                    + " named with --kafka or KAFKA_BOOTSTRAP is not the demo's to restart: leave CUT_BROKER out");
        }
    }

    ChaosResult run(String name, List<Operation> ops, int consumers, double duplicateRate, List<Fault> faults,
                    long seed) throws Exception {
        check(faults);
        long started = System.nanoTime();
        Random random = new Random(seed);
        List<Operation> delivery = new ArrayList<>(ops);
        for (Operation op : ops) {
            if (random.nextDouble() < duplicateRate) {
                delivery.add(op);
            }
        }
        Collections.shuffle(delivery, random);
        Envelope envelope = new Envelope();
        List<byte[]> bodies = delivery.stream().map(envelope::encode).toList();
        String database = "chaos_" + Long.toString(System.nanoTime(), 36);
        ConnectionString mongo = new ConnectionString(w.mongoBackend.connectionString());
        ServerAddress target = new ServerAddress(mongo.getHosts().get(0));
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Counts counts = new Counts(meters);
        List<ShareGroupConsumer> running = new ArrayList<>();
        List<String> injected = new ArrayList<>();
        Process child = null;
        AtomicLong childHandled = new AtomicLong();
        kafka.declare();
        kafka.lockDuration(LOCK);
        try (TcpProxy proxy = TcpProxy.start(target.getHost(), target.getPort());
             MongoClient proxied = MongoClients.create(MongoClientSettings.builder().applyConnectionString(mongo)
                     .applyToClusterSettings(c -> c.hosts(List.of(new ServerAddress("127.0.0.1", proxy.port())))
                             .mode(ClusterConnectionMode.SINGLE).serverSelectionTimeout(30, TimeUnit.SECONDS))
                     .build())) {
            MongoDatabase db = proxied.getDatabase(database);
            GuardedApplier applier = GuardedApplier.create(db.getCollection(Enrollment.STUDENTS, BsonDocument.class),
                    Enrollment.STUDENT_SCHEMA, ApplierOptions.ofDefaults().withMeters(meters));
            int inProcess = consumers;
            if (faults.contains(Fault.KILL_CONSUMER)) {
                child = startChild(database, childHandled);
                inProcess--;
            }
            try (KafkaOperationPublisher publisher = kafka.publisher()) {
                publisher.publishRaw(bodies);
            }
            for (int i = 0; i < inProcess; i++) {
                running.add(kafka.startConsumers(applier, THREADS, meters, Optional.empty()));
            }
            BooleanSupplier[] at = new BooleanSupplier[3];
            for (int i = 0; i < 3; i++) {
                long share = bodies.size() * (i + 1L) / 4;
                at[i] = () -> counts.handled() + childHandled.get() >= share;
            }
            if (faults.contains(Fault.KILL_CONSUMER)) {
                String late = until(at[0]) ? "" : " (late: the consumers were stuck)";
                child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);   // SIGKILL: it settles nothing
                running.add(kafka.startConsumers(applier, THREADS, meters, Optional.empty()));
                injected.add(Fault.KILL_CONSUMER.described() + late);
            }
            if (faults.contains(Fault.CUT_BROKER)) {
                String late = until(at[1]) ? "" : " (late: the consumers were stuck)";
                kafka.embedded().orElseThrow().restart();
                injected.add("broker restarted" + late);
            }
            if (faults.contains(Fault.CUT_MONGO)) {
                String late = until(at[2]) ? "" : " (late: the consumers were stuck)";
                proxy.cut();
                LockSupport.parkNanos(CUT.toNanos());   // how long the fault lasts, not a wait
                proxy.restore();
                injected.add(Fault.CUT_MONGO.described() + late);
            }
            Map<String, EntityState> expected = new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops);
            settle(db, expected);
            running.forEach(ShareGroupConsumer::close);
            running.clear();
            Map<String, EntityState> stored = stored(db);
            List<String> diverged = new ArrayList<>(ReferenceModel.diverged(expected, stored));
            long lost = ReferenceModel.missingEffects(expected, stored);
            long deadLettered = kafka.deadLettered();
            db.drop();
            return new ChaosResult(name, ops.size(), delivery.size(), injected, diverged.size(), lost, deadLettered,
                    (System.nanoTime() - started) / 1e9, seed, Optional.empty(), List.of(),
                    diverged.subList(0, Math.min(10, diverged.size())), Optional.empty());
        } finally {
            running.forEach(ShareGroupConsumer::close);
            if (child != null) {
                child.destroyForcibly();
            }
        }
    }

    /** The consumer to kill, in a JVM of its own; returns once it started, its count followed in {@code handled}. */
    private Process startChild(String database, AtomicLong handled) throws Exception {
        Process child = KafkaConsumeProcess.start(kafka.bootstrap(), kafka.topic, kafka.group,
                w.mongoBackend.connectionString(), database, THREADS);
        AtomicBoolean ready = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                    if (line.equals("READY")) {
                        ready.set(true);
                    } else if (line.startsWith("HANDLED ")) {
                        handled.set(Long.parseLong(line.substring("HANDLED ".length())));
                    }
                }
            } catch (java.io.IOException | NumberFormatException e) {
                // the process was killed: its last count stands
            }
        }, "chaos-child-output");
        reader.setDaemon(true);
        reader.start();
        if (!until(() -> ready.get() || !child.isAlive())) {
            child.destroyForcibly();
            throw new IllegalStateException("chaos: the consumer process did not start within " + STEP.toSeconds() + " s");
        }
        if (!child.isAlive()) {
            throw new IllegalStateException("chaos: the consumer process exited at start (" + child.exitValue() + ")");
        }
        return child;
    }

    /**
     * Until the students equal the oracle's, or stopped changing for {@link #QUIET} (a divergence, or records the
     * broker archived); bounded by {@link #STEP}.
     */
    private static void settle(MongoDatabase db, Map<String, EntityState> expected) {
        long deadline = System.nanoTime() + STEP.toNanos();
        int last = 0;
        long since = System.nanoTime();
        while (System.nanoTime() - deadline < 0) {
            List<BsonDocument> docs = db.getCollection(Enrollment.STUDENTS, BsonDocument.class).find()
                    .into(new ArrayList<>());
            if (EntityState.readAll(docs, Enrollment.STUDENT_SCHEMA).equals(expected)) {
                return;
            }
            if (docs.hashCode() != last) {
                last = docs.hashCode();
                since = System.nanoTime();
            } else if (System.nanoTime() - since > QUIET.toNanos()) {
                return;
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private static Map<String, EntityState> stored(MongoDatabase db) {
        return EntityState.readAll(db.getCollection(Enrollment.STUDENTS, BsonDocument.class).find(),
                Enrollment.STUDENT_SCHEMA);
    }

    /** Polls {@code condition} until it holds (true) or {@link #STEP} passed (false). */
    private static boolean until(BooleanSupplier condition) {
        long deadline = System.nanoTime() + STEP.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
        return true;
    }
}
