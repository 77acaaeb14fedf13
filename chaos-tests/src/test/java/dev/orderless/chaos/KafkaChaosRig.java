package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.backends.MongoBackend;
import dev.orderless.demo.Enrollment;
import dev.orderless.demo.Poison;
import dev.orderless.demo.WebApp;
import dev.orderless.kafka.DeadLetterTopic;
import dev.orderless.kafka.KafkaDeadLetter;
import dev.orderless.kafka.KafkaOperationPublisher;
import dev.orderless.kafka.KafkaTopology;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.kafka.KafkaTopics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;

/**
 * One Kafka chaos scenario's world: a topic of {@link #PARTITIONS} partitions, its dead-letter topic and a share group
 * of its own on the class's broker, and the students' collection of a fresh database. The rig's consumers reach
 * MongoDB through one proxy ({@link #mongoProxy}), so that MongoDB can be cut for all of them; the test itself
 * (stamping, publishing, checking) talks to MongoDB and Kafka directly. The operations are the RabbitMQ chaos suite's
 * (the simulated web application's, stamped per student), checked against the same oracle
 * ({@link ReferenceModel}).
 */
final class KafkaChaosRig implements AutoCloseable {
    /** The work topic's partitions: as many as the consumers of a scenario (a share group needs no more). */
    static final int PARTITIONS = 4;
    private static final AtomicInteger SCENARIOS = new AtomicInteger();

    final long seed;
    final String bootstrap;
    final String topic;
    final String deadLetterTopic;
    final String group;
    final TcpProxy mongoProxy;
    final MongoDatabase direct;
    final MongoCollection<BsonDocument> students;
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final List<ShareGroupConsumer> consumers = new ArrayList<>();
    final Map<String, Object> kafka;
    private final Random random;
    private final String mongoUri;
    private final MongoClient proxiedClient;
    private final MongoDatabase proxied;
    private final Set<String> poisonBodies = new HashSet<>();
    private int poisonPublished;
    private int published;

    KafkaChaosRig(String bootstrap, MongoBackend mongo, MongoDatabase direct, long seed) {
        this.seed = seed;
        this.random = new Random(seed);
        this.bootstrap = bootstrap;
        this.kafka = Map.of("bootstrap.servers", bootstrap);
        String name = "chaos-" + Long.toHexString(seed) + "-" + SCENARIOS.incrementAndGet();
        this.topic = name + ".ops";
        this.group = name;
        this.direct = direct;
        this.students = direct.getCollection(Enrollment.STUDENTS, BsonDocument.class);
        this.mongoUri = mongo.connectionString();
        ShareConsumerOptions options = options(1);
        this.deadLetterTopic = options.deadLetterTopic();
        KafkaTopology.declare(kafka, options, PARTITIONS);
        String[] target = new ConnectionString(mongoUri).getHosts().get(0).split(":");
        this.mongoProxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
        this.proxiedClient = MongoClients.create("mongodb://127.0.0.1:" + mongoProxy.port()
                // MongoDB's client gives up well within a record's lock (docs/guide/kafka.md: keep the lock above it)
                + "/?directConnection=true&serverSelectionTimeoutMS=500&connectTimeoutMS=500&socketTimeoutMS=5000");
        this.proxied = proxiedClient.getDatabase(direct.getName());
    }

    /** The options of the scenario's consumers: its topic and group, short back-offs. */
    ShareConsumerOptions options(int concurrency) {
        return ShareConsumerOptions.ofDefaults(topic, group).withConcurrency(concurrency)
                .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500)));
    }

    /** The simulated web application's actions, stamped per student (as in the RabbitMQ suite). */
    List<Operation> workload(int ops, int studentCount) {
        return new WebApp(MongoCounterStamper.create(direct.getCollection("seq_counters", BsonDocument.class)),
                studentCount, 12, seed).act(ops);
    }

    /**
     * Produces every op (some twice), shuffled if asked, with {@code poison} poison records among them, and returns
     * once Kafka acknowledged them all; returns the record count.
     */
    int publish(List<Operation> ops, boolean shuffle, double duplicateRate, int poison) {
        List<byte[]> bad = Poison.messages(poison, poisonPublished);
        bad.forEach(p -> poisonBodies.add(new String(p, StandardCharsets.UTF_8)));
        List<byte[]> records = ChaosRig.messages(ops, random, shuffle, duplicateRate, bad);
        poisonPublished += poison;
        try (KafkaOperationPublisher publisher = KafkaOperationPublisher.start(kafka, topic)) {
            publisher.publishRaw(records);
        }
        published += records.size();
        return records.size();
    }

    /** A share-group consumer in this JVM with {@code concurrency} Kafka consumers, writing through the proxy. */
    ShareGroupConsumer startConsumer(int concurrency) {
        return startConsumer(concurrency, options -> options);
    }

    ShareGroupConsumer startConsumer(int concurrency, UnaryOperator<ShareConsumerOptions> tune) {
        GuardedApplier applier = GuardedApplier.create(proxied.getCollection(Enrollment.STUDENTS, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA, ApplierOptions.ofDefaults().withMeters(meters));
        ShareGroupConsumer consumer = ShareGroupConsumer.builder(consumerKafka(), applier)
                .options(tune.apply(options(concurrency))).meters(meters).start();
        consumers.add(consumer);
        return consumer;
    }

    /**
     * A consumer in a JVM of its own (see {@link KafkaConsumerProcess}), straight to MongoDB; returns once its
     * consumers are started.
     */
    KafkaConsumerProcess startConsumerProcess(int concurrency, java.nio.file.Path log) throws Exception {
        return KafkaConsumerProcess.start(new KafkaConsumerProcess.Target(bootstrap, mongoUri, direct.getName(), topic,
                group, concurrency), log);
    }

    /** The consumers' client properties: the broker. */
    Map<String, Object> consumerKafka() {
        return kafka;
    }

    /** Records the rig's consumers in this JVM handled: applied in any outcome, or dead-lettered. */
    double handled() {
        double sum = 0;
        for (Outcome o : Outcome.values()) {
            sum += meters.find("orderless.consume.outcomes").tag("outcome", o.tag()).counters().stream()
                    .mapToDouble(c -> c.count()).sum();
        }
        return sum + deadLetteredByMeters();
    }

    /** Records the rig's consumers in this JVM dead-lettered, by their meters. */
    long deadLetteredByMeters() {
        return Math.round(meters.find("orderless.consume.dead_lettered").counters().stream()
                .mapToDouble(c -> c.count()).sum());
    }

    /** Waits (bounded) until the consumers in this JVM handled {@code share} of {@code records}. */
    void progress(int records, double share) {
        Awaitility.await("handled " + share + " of " + records).atMost(Duration.ofMinutes(1))
                .pollInterval(Duration.ofMillis(50)).until(() -> handled() >= records * share);
    }

    /**
     * Records of the topic the share group has not settled (accepted, rejected or archived): over the partitions,
     * the group's lag (the whole partition where the group has no state for it yet).
     */
    long unsettled() {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000))) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new TopicPartition(topic, p));
            }
            Map<TopicPartition, Long> ends = new java.util.HashMap<>();
            admin.listOffsets(partitions.stream().collect(java.util.stream.Collectors.toMap(p -> p,
                    p -> OffsetSpec.latest()))).all().get(10, TimeUnit.SECONDS)
                    .forEach((p, info) -> ends.put(p, info.offset()));
            Map<TopicPartition, SharePartitionOffsetInfo> group = admin.listShareGroupOffsets(Map.of(this.group,
                    new ListShareGroupOffsetsSpec().topicPartitions(partitions))).partitionsToOffsetInfo(this.group)
                    .get(10, TimeUnit.SECONDS);
            long unsettled = 0;
            for (TopicPartition p : partitions) {
                SharePartitionOffsetInfo info = group.get(p);
                // the lag counts what is settled past the start offset too (the start offset is persisted lazily:
                // seen at 0 with all 100 records of a partition accepted, lag 0); no state yet: nothing settled
                unsettled += info == null ? ends.get(p)
                        : info.lag().orElse(Math.max(0, ends.get(p) - Math.max(0, info.startOffset())));
            }
            return unsettled;
        } catch (Exception e) {
            throw new IllegalStateException("the share group " + group + "'s offsets on " + bootstrap + ": " + e, e);
        }
    }

    /**
     * Until every record is settled: waits (bounded) until the share group has nothing left, then closes the rig's
     * consumers. A record no consumer settles stays in {@link #unsettled()} and is counted lost.
     */
    void drain() {
        try {
            Awaitility.await("share group " + group + " settled every record").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() -> unsettled() == 0);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // what is left is counted lost below, the verdict says how many
        }
        consumers.forEach(ShareGroupConsumer::close);
        consumers.clear();
    }

    /**
     * What a scenario ends with.
     *
     * @param records          records produced (operations, their duplicates, poison)
     * @param diverged         students whose stored state differs from the oracle's
     * @param lost             operations whose effect the oracle shows and the stored students lack, plus records the
     *                         share group never settled
     * @param deadLetters      records in the dead-letter topic
     * @param distinctPoison   distinct poison bodies among them
     * @param poison           poison records produced
     */
    record Verdict(int records, long diverged, long lost, long deadLetters, long distinctPoison, int poison) {
    }

    Verdict verify(List<Operation> ops) {
        long unsettled = unsettled();
        Map<String, EntityState> expected = new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops);
        Map<String, EntityState> stored = EntityState.readAll(students.find(), Enrollment.STUDENT_SCHEMA);
        long diverged = ReferenceModel.diverged(expected, stored).size();
        long lost = ReferenceModel.missingEffects(expected, stored) + unsettled;
        long deadLetters = KafkaTopics.count(bootstrap, deadLetterTopic);
        Set<String> distinct = new HashSet<>();
        for (KafkaDeadLetter letter : new DeadLetterTopic(kafka, deadLetterTopic).peek((int) deadLetters + 10)) {
            String body = new String(letter.body(), StandardCharsets.UTF_8);
            assertThat(poisonBodies).as("a dead letter that is not poison (%s: %s): %s", letter.kind(), letter.reason(),
                    body).contains(body);
            distinct.add(body);
        }
        return new Verdict(published, diverged, lost, deadLetters, distinct.size(), poisonPublished);
    }

    @Override
    public void close() {
        consumers.forEach(ShareGroupConsumer::close);
        consumers.clear();
        proxiedClient.close();
        mongoProxy.close();
        try {
            KafkaTopics.delete(bootstrap, topic, deadLetterTopic);
        } catch (RuntimeException e) {
            // the broker is the class's and goes with it; a topic left behind costs nothing
        }
    }
}
