package dev.orderless.demo.compare;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.demo.Enrollment;
import dev.orderless.kafka.KafkaTopology;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import dev.orderless.message.Envelope;
import dev.orderless.testing.kafka.KafkaTopics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.bson.BsonDocument;

/**
 * Runs Kafka trials: both contestants against the same Kafka and the same MongoDB (each consumer process through
 * a proxy that adds the trial's latency to its round trips), each trial on a topic, a group and a collection of
 * its own. The records are published by one idempotent producer ({@code acks=all}, key = the student, value =
 * the orderless envelope), so both contestants read the same partitions of the same bytes.
 *
 * <ol>
 *   <li>Create the trial's topic ({@link KafkaPlan#partitions()} partitions); for the share group, its
 *       topology as users declare it (dead-letter topic, the group reading from the earliest record).
 *   <li>Start the consumers and wait until the broker has them all in the group, as many at work as there are
 *       partitions to take (a consumer group hands its partitions out one member at a time).
 *   <li>Throughput (and scale-out: a drain with 1 consumer, one with more): publish every record at once and time
 *       the drain from the first publish.
 *       Stuck: publish at a steady rate every contestant keeps up with; a third of the way in, the next handler
 *       about to write is stuck.
 *   <li>Wait until every record was applied, stop the consumers, compare every student with the sequential
 *       oracle, delete the topics and the group.
 * </ol>
 */
public final class KafkaArena implements AutoCloseable {
    private static final String DATABASE = "compare";

    private final Map<String, Object> kafka;
    private final String bootstrap;
    private final String mongoHost;
    private final MongoClient direct;
    private final Duration stall;
    private final int rate;
    private final Duration deadline;
    private final KafkaProducer<String, byte[]> producer;
    private final Admin admin;
    private final Envelope envelope = new Envelope();
    /** Names this run's topics and collections apart from any earlier run's leftovers. */
    private final String run = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
    private final AtomicInteger trials = new AtomicInteger();

    /**
     * @param bootstrap the Kafka (4.2 or later, share groups enabled)
     * @param mongoUri  the MongoDB every contestant writes to
     * @param stall     how long a stuck handler is stuck
     * @param rate      records per second published in the stuck trial
     * @param deadline  how long one trial may take before it is abandoned as failed
     */
    public KafkaArena(String bootstrap, String mongoUri, Duration stall, int rate, Duration deadline) {
        this.bootstrap = bootstrap;
        this.kafka = Map.of("bootstrap.servers", bootstrap);
        this.mongoHost = new ConnectionString(mongoUri).getHosts().get(0);
        this.direct = MongoClients.create(mongoUri);
        this.stall = stall;
        this.rate = rate;
        this.deadline = deadline;
        Map<String, Object> p = new HashMap<>(kafka);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // not idempotent: an idempotent producer's first batch to a partition whose leader is not ready yet came back
        // NOT_LEADER_OR_FOLLOWER, and every batch after it OUT_OF_ORDER_SEQUENCE_NUMBER, retried for ever (embedded
        // KRaft broker, 4.2.2); one request in flight keeps each partition's order through retries all the same
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);   // at a steady rate each record goes at once, as its publisher sent it
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        this.producer = new KafkaProducer<>(p);
        this.admin = Admin.create(kafka);
    }

    /** The index of {@code op} in its workload: {@link CompareWorkload} gives action i the seq i + 1. */
    static int index(Operation op) {
        return index(op.seq());
    }

    static int index(long seq) {
        return Math.toIntExact(seq - 1);
    }

    /** Runs one trial to its end and measures it. */
    public KafkaTrialResult run(KafkaTrial trial) {
        int n = trials.incrementAndGet();
        String topic = "compare." + run + "." + n + "." + trial.contestant().name().toLowerCase(Locale.ROOT);
        String group = topic + ".group";
        String collection = "kafka_students_" + run + "_" + n;
        MongoCollection<BsonDocument> students = direct.getDatabase(DATABASE).getCollection(collection, BsonDocument.class);
        List<Operation> ops = trial.workload().ops();
        Tally tally = new Tally(ops.size());
        Stuck stuck = new Stuck(stall, tally);
        declare(trial, topic, group);
        // read by the CPU sampler while processes join
        List<KafkaConsumerProcess> fleet = new CopyOnWriteArrayList<>();
        List<GroupMember> members = new CopyOnWriteArrayList<>();
        CpuMeter cpu = CpuMeter.ofGroups(() -> fleet.stream().map(process -> process.threads).toList());
        CpuMeter server = CpuMeter.ofNamed(name -> name.startsWith(Arena.EMBEDDED_SERVER_THREADS));
        List<CpuMeter.Sampling> samplings = new ArrayList<>();
        CpuPerMessage consumerCpu;
        CpuPerMessage serverCpu;
        long started;
        try {
            for (int p = 0; p < trial.consumers(); p++) {
                fleet.add(start(trial, p, topic, group, collection, tally, stuck, members));
            }
            awaitJoined(trial, group, trial.consumers(), members);
            cpu.start();
            server.start();
            samplings.add(cpu.sampling(Duration.ofMillis(50)));
            samplings.add(server.sampling(Duration.ofMillis(50)));
            // every consumer in the group with its partitions before the first record: a consumer group hands its
            // partitions out one member at a time, and a backlog published before would drain before the last joined
            started = System.nanoTime();
            if (trial.fault() == Fault.STUCK) {
                publish(ops, topic, tally, rate, stuck);
            } else {
                publish(ops, topic, tally, 0, stuck);
            }
            await(() -> tally.applied() == ops.size(), "every record applied", members);
            samplings.forEach(CpuMeter.Sampling::close);   // the last samples
            consumerCpu = cpu.per(ops.size());
            serverCpu = server.per(ops.size());
        } catch (RuntimeException e) {
            students.drop();
            throw e;
        } finally {
            samplings.forEach(CpuMeter.Sampling::stop);   // closed already unless the trial failed
            fleet.forEach(KafkaConsumerProcess::close);
            forget(trial, topic, group);
        }
        int diverged = Arena.diverged(trial.contestant() == KafkaContestant.SHARE_GROUP, ops, students);
        students.drop();
        return new KafkaTrialResult(trial, TrialResult.of(trial.analogue(), ops, tally,
                new TrialResult.Marks(started, 0, 0, 0, 0, 0), diverged,
                consumerCpu, serverCpu));
    }

    private void declare(KafkaTrial trial, String topic, String group) {
        if (trial.contestant() == KafkaContestant.SHARE_GROUP) {
            KafkaTopology.declare(kafka, ShareConsumerOptions.ofDefaults(topic, group), trial.partitions());
        } else {
            KafkaTopics.create(bootstrap, topic, trial.partitions());
        }
        await(() -> led(topic, trial.partitions()), "every partition of " + topic + " led", List.of());
    }

    /** Whether every partition of {@code topic} has a leader: the first records sent to a new topic wait for it. */
    private boolean led(String topic, int partitions) {
        try {
            TopicDescription described = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
            return described.partitions().size() == partitions
                    && described.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty());
        } catch (ExecutionException | TimeoutException e) {
            return false;   // not in the metadata yet: asked again
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The trial's topics and group deleted; a failure to is said, not fatal: the next trial uses names of its own. */
    private void forget(KafkaTrial trial, String topic, String group) {
        try {
            if (trial.contestant() == KafkaContestant.SHARE_GROUP) {
                admin.deleteShareGroups(List.of(group)).all().get(30, TimeUnit.SECONDS);
                KafkaTopics.delete(bootstrap, topic, topic + ".dlt");
            } else {
                admin.deleteConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS);
                KafkaTopics.delete(bootstrap, topic);
            }
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            System.err.println("[compare] could not delete " + topic + " or its group: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private KafkaConsumerProcess start(KafkaTrial trial, int p, String topic, String group, String collection, Tally tally,
                                       Stuck stuck, List<GroupMember> members) {
        KafkaConsumerProcess process = new KafkaConsumerProcess(p, mongoHost, trial.latency(), tally.roundTrips());
        MongoCollection<BsonDocument> students = process.mongo.getDatabase(DATABASE).getCollection(collection, BsonDocument.class);
        if (trial.contestant() == KafkaContestant.SHARE_GROUP) {
            ObservationRegistry observations = ObservationRegistry.create();
            observations.observationConfig().observationHandler(new OrderlessWatch(tally, stuck, process.id));
            ShareGroupConsumer consumer = process.within(() -> ShareGroupConsumer.builder(kafka,
                            GuardedApplier.create(students, Enrollment.STUDENT_SCHEMA))
                    .options(ShareConsumerOptions.ofDefaults(topic, group).withConcurrency(1).withMaxPollRecords(Trial.BATCH))
                    .meters(new SimpleMeterRegistry())
                    .observations(observations)
                    .start());
            process.runs(consumer);
        } else {
            members.add(new GroupMember(process, kafka, topic, group, students, tally, stuck, stall).start());
        }
        return process;
    }

    /**
     * Waits until the broker has {@code expected} members in the trial's group and every partition assigned to
     * one of them: a member that has not joined yet takes no work, and its join is no part of the pace.
     */
    private void awaitJoined(KafkaTrial trial, String group, int expected, List<GroupMember> members) {
        await(() -> joined(trial, group, expected), expected + " members in the group, every partition assigned", members);
    }

    private boolean joined(KafkaTrial trial, String group, int expected) {
        try {
            List<Set<TopicPartition>> assignments = new ArrayList<>();
            if (trial.contestant() == KafkaContestant.SHARE_GROUP) {
                ShareGroupDescription described = admin.describeShareGroups(List.of(group)).describedGroups().get(group)
                        .get(10, TimeUnit.SECONDS);
                described.members().forEach(m -> assignments.add(m.assignment().topicPartitions()));
            } else {
                ConsumerGroupDescription described = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                        .get(10, TimeUnit.SECONDS);
                described.members().forEach(m -> assignments.add(m.assignment().topicPartitions()));
            }
            return joined(assignments, expected, trial.partitions());
        } catch (ExecutionException | TimeoutException e) {
            return false;   // not described yet (the group is created by its first member): asked again
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * Whether {@code expected} members are in, every partition is assigned, and as many members hold a partition as
     * can ({@code min(expected, partitions)}): a consumer group first hands every partition to its first member and
     * moves them to the others one by one, so covered alone would count the pace from before the others took work (a
     * share group's members may all hold partitions, shared).
     */
    static boolean joined(Collection<? extends Collection<TopicPartition>> assignments, int expected, int partitions) {
        Set<Integer> covered = new HashSet<>();
        assignments.forEach(assigned -> assigned.forEach(tp -> covered.add(tp.partition())));
        long working = assignments.stream().filter(assigned -> !assigned.isEmpty()).count();
        return assignments.size() == expected && covered.size() == partitions && working >= Math.min(expected, partitions);
    }

    /**
     * Publishes {@code ops} in order, keyed by student; {@code perSecond} 0 publishes as fast as the broker takes
     * them. At a steady rate, the stuck-handler fault is armed a third of the way in. Returns once Kafka
     * acknowledged every record.
     */
    private void publish(List<Operation> ops, String topic, Tally tally, int perSecond, Stuck stuck) {
        long start = System.nanoTime();
        int third = ops.size() / 3;
        for (int i = 0; i < ops.size(); i++) {
            if (perSecond > 0) {
                long wait = start + (long) (i * 1e9 / perSecond) - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
            }
            Operation op = ops.get(i);
            tally.published(i, System.nanoTime());
            producer.send(new ProducerRecord<>(topic, op.entity(), envelope.encode(op)));
            if (perSecond > 0 && i + 1 == third) {
                stuck.arm();
            }
        }
        producer.flush();
    }

    private void await(BooleanSupplier condition, String what, List<GroupMember> members) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            for (GroupMember member : members) {
                member.failed().ifPresent(e -> {
                    throw new IllegalStateException("trial abandoned: a consumer-group member died: " + e, e);
                });
            }
            if (System.nanoTime() > end) {
                throw new IllegalStateException("trial abandoned: not " + what + " within " + deadline.toSeconds() + " s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(10));
        admin.close(Duration.ofSeconds(10));
        direct.close();
    }
}
