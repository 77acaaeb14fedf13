package dev.orderless.demo.compare;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.broker.QueueTopology;
import dev.orderless.demo.Enrollment;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.TcpProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.BatchMessageListener;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * Runs trials: every contestant against the same RabbitMQ and the same MongoDB (through a proxy that adds
 * the trial's latency to every round trip), each trial on queues and a collection of its own.
 *
 * <ol>
 *   <li>Declare the trial's quorum queues (single active consumer where the contestant uses it).
 *   <li>Without a fault that needs steady traffic (none, scale-out): publish every message first, then start
 *       the consumers and time the drain. With one (stuck handler, kill): start the consumers, then publish
 *       at a steady rate every contestant keeps up with, so that latency shows the fault and not a backlog.
 *   <li>The fault strikes once a third of the messages are published (stuck, kill) or applied (scale-out).
 *   <li>Wait until every message was applied and the queues are empty, stop the consumers (what they hold
 *       is finished), and compare every student with the sequential oracle.
 * </ol>
 */
public final class Arena implements AutoCloseable {
    static final String INDEX = "x-compare-index";
    private static final String DATABASE = "compare";
    /** How the embedded MongoDB's worker threads are named (dev.orderless.backends.EmbeddedServer). */
    static final String EMBEDDED_SERVER_THREADS = "embedded-mongo-worker";

    private final URI rabbit;
    private final String mongoHost;
    private final TcpProxy toMongo;
    private final String proxiedMongo;
    /** Names this run's queues and collections apart from any earlier run's leftovers. */
    private final String run = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
    private final CachingConnectionFactory admin;
    private final MongoClient direct;
    private final Duration stall;
    private final int rate;
    private final Duration deadline;
    private final Envelope envelope = new Envelope();
    private final AtomicInteger trials = new AtomicInteger();

    /**
     * @param rabbit   a RabbitMQ (quorum queues and single active consumers: not the embedded broker)
     * @param mongoUri the MongoDB every contestant writes to
     * @param stall    how long a stuck handler is stuck
     * @param rate     messages per second published in a trial with a stuck handler or a kill
     * @param deadline how long one trial may take before it is abandoned as failed
     */
    public Arena(URI rabbit, String mongoUri, Duration stall, int rate, Duration deadline) {
        this.rabbit = rabbit;
        ConnectionString mongo = new ConnectionString(mongoUri);
        this.mongoHost = mongo.getHosts().get(0);
        this.toMongo = ConsumerProcess.proxyTo(mongoHost);
        this.proxiedMongo = "mongodb://127.0.0.1:" + toMongo.port() + "/?directConnection=true";
        this.admin = new CachingConnectionFactory(ConsumerProcess.amqp(rabbit));
        admin.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
        this.direct = MongoClients.create(mongo);
        this.stall = stall;
        this.rate = rate;
        this.deadline = deadline;
    }

    /** Runs one trial to its end and measures it. */
    public TrialResult run(Trial trial) {
        int n = trials.incrementAndGet();
        String queue = "compare." + run + "." + n + "." + trial.contestant().name().toLowerCase(java.util.Locale.ROOT);
        MongoCollection<BsonDocument> students = direct.getDatabase(DATABASE)
                .getCollection("students_" + run + "_" + n, BsonDocument.class);
        List<Operation> ops = trial.workload().ops();
        Tally tally = new Tally(ops.size());
        toMongo.latency(trial.latency().dividedBy(2));
        List<String> queues = declare(trial, queue);
        Stuck stuck = new Stuck(stall, tally);
        // read by the CPU sampler while processes join
        List<ConsumerProcess> fleet = new java.util.concurrent.CopyOnWriteArrayList<>();
        CpuMeter cpu = CpuMeter.ofGroups(() -> fleet.stream().map(process -> process.threads).toList());
        // the embedded MongoDB's, where it runs in this JVM (none measured of a MongoDB elsewhere): where a guarded
        // write's cost lands besides the consumer
        CpuMeter server = CpuMeter.ofNamed(name -> name.startsWith(EMBEDDED_SERVER_THREADS));
        CpuPerMessage consumerCpu;
        CpuPerMessage serverCpu;
        CpuMeter.Sampling sampling = null;
        CpuMeter.Sampling serverSampling = null;
        long started;
        int appliedAtStart;
        long faultAt = 0;
        int appliedAtFault = 0;
        long joinedAt = 0;
        int appliedAtJoined = 0;
        try {
            boolean steady = trial.fault() == Fault.STUCK || trial.fault() == Fault.KILL;
            if (!steady) {
                publish(ops, queues, tally, 0, () -> false);
            }
            int first = trial.fault() == Fault.SCALE_OUT ? 1 : trial.consumers();
            fleet.addAll(startAll(trial, first, queues, students.getNamespace().getCollectionName(), tally, stuck));
            standbys(trial, fleet, queues, students.getNamespace().getCollectionName(), tally, stuck);
            // the pace is measured from here, every consumer up: what drained while they started is not counted
            started = System.nanoTime();
            appliedAtStart = tally.applied();
            cpu.start();
            server.start();
            sampling = cpu.sampling(Duration.ofMillis(50));
            serverSampling = server.sampling(Duration.ofMillis(50));
            if (steady) {
                started = System.nanoTime();
                int third = ops.size() / 3;
                AtomicInteger sent = new AtomicInteger();
                publish(ops, queues, tally, rate, () -> {
                    if (sent.incrementAndGet() == third) {
                        if (trial.fault() == Fault.STUCK) {
                            stuck.arm();
                        } else {
                            // the one that handled the latest message: an active consumer, whichever registered first
                            fleet.stream().filter(process -> process.id == tally.lastBy()).findFirst()
                                    .orElse(fleet.get(0)).kill();
                        }
                    }
                    return false;
                });
            } else if (trial.fault() == Fault.SCALE_OUT) {
                await(() -> tally.applied() >= ops.size() / 3, "a third applied");
                faultAt = System.nanoTime();
                appliedAtFault = tally.applied();
                for (int p = 1; p < 4; p++) {
                    fleet.add(start(trial, p, 4, queues, students.getNamespace().getCollectionName(), tally, stuck, false));
                }
                joinedAt = System.nanoTime();   // the pace after: from the moment all four are up
                appliedAtJoined = tally.applied();
            }
            await(() -> tally.applied() == ops.size(), "every message applied");
            sampling.close();
            serverSampling.close();
            consumerCpu = cpu.per(ops.size() - appliedAtStart);
            serverCpu = server.per(ops.size() - appliedAtStart);
            await(() -> queues.stream().allMatch(q -> ready(q) == 0), "the queues empty");
        } catch (RuntimeException e) {
            students.drop();
            throw e;
        } finally {
            if (sampling != null) {
                sampling.stop();   // closed already unless the trial failed
            }
            if (serverSampling != null) {
                serverSampling.stop();
            }
            fleet.forEach(ConsumerProcess::close);
            RabbitAdmin rabbitAdmin = new RabbitAdmin(admin);
            queues.forEach(rabbitAdmin::deleteQueue);
            if (trial.contestant() == Contestant.ORDERLESS) {
                rabbitAdmin.deleteQueue(queue + ".dlq");
                rabbitAdmin.deleteQueue(QueueTopology.parkingQueue(queue + ".dlq"));
            }
        }
        int diverged = diverged(trial.contestant() == Contestant.ORDERLESS, ops, students);
        students.drop();
        return TrialResult.of(trial, ops, tally, new TrialResult.Marks(started, appliedAtStart, faultAt, appliedAtFault,
                joinedAt, appliedAtJoined), diverged, consumerCpu, serverCpu);
    }

    /**
     * Messages per second the broker delivers to {@code consumers} consumers that only ack: the broker's
     * limit. The backlog is published first; the pace is measured once every consumer is up.
     */
    public double ackOnly(int consumers, int messages) {
        String queue = "compare." + run + "." + trials.incrementAndGet() + ".ack_only";
        List<String> queues = List.of(queue);
        new RabbitAdmin(admin).declareQueue(QueueBuilder.durable(queue).quorum().build());
        List<Operation> ops = new CompareWorkload(Keys.uniform(10_000), messages, 1).ops();
        Tally tally = new Tally(messages);
        publish(ops, queues, tally, 0, () -> false);
        List<ConsumerProcess> fleet = new ArrayList<>();
        try {
            for (int p = 0; p < consumers; p++) {
                ConsumerProcess process = new ConsumerProcess(p, rabbit, mongoHost, Duration.ZERO, tally.roundTrips());
                fleet.add(process);
                SimpleMessageListenerContainer container = container(process, queue, false);
                container.setMessageListener((MessageListener) m -> tally.applied(index(m), "ack", 0, System.nanoTime()));
                process.startsLater(container::start);
                process.runs(container::stop);
            }
            fleet.parallelStream().forEach(ConsumerProcess::start);
            await(() -> tally.applied() == messages, "every message acked");
            // from the first ack to the last: the broker drains faster than eight consumers start one by one
            long first = Long.MAX_VALUE;
            long last = 0;
            for (int i = 0; i < messages; i++) {
                first = Math.min(first, tally.appliedAt(i));
                last = Math.max(last, tally.appliedAt(i));
            }
            return (messages - 1) / ((last - first) / 1e9);
        } finally {
            fleet.forEach(ConsumerProcess::close);
            new RabbitAdmin(admin).deleteQueue(queue);
        }
    }

    /**
     * Messages per second MongoDB takes as unordered bulk upserts of 50, {@code threads} at once, with
     * {@code latency} added: its limit. Connections are opened and warmed before the clock starts.
     */
    public double bulkOnly(CompareWorkload workload, int threads, Duration latency) {
        List<Operation> ops = workload.ops();
        toMongo.latency(latency.dividedBy(2));
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxiedMongo))
                .applyToConnectionPoolSettings(pool -> pool.minSize(threads)).build())) {
            MongoCollection<BsonDocument> students = client.getDatabase(DATABASE)
                    .getCollection("bulk_" + run + "_" + trials.incrementAndGet(), BsonDocument.class);
            AtomicInteger next = new AtomicInteger();
            java.util.concurrent.atomic.AtomicReference<RuntimeException> failed = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.CyclicBarrier go = new java.util.concurrent.CyclicBarrier(threads + 1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread worker = new Thread(() -> {
                    PlainUpserts.applyUnordered(students, List.of(Operation.add("warm-up", 1, Enrollment.CLASSES, "C0")));
                    try {
                        go.await(deadline.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (Exception e) {
                        return;
                    }
                    try {
                        for (int from = next.getAndAdd(Trial.BATCH); from < ops.size(); from = next.getAndAdd(Trial.BATCH)) {
                            PlainUpserts.applyUnordered(students, ops.subList(from, Math.min(ops.size(), from + Trial.BATCH)));
                        }
                    } catch (RuntimeException e) {
                        failed.set(e);   // the rate of unfinished work is no limit: said after the join
                    }
                }, "compare-bulk-" + t);
                worker.start();
                workers.add(worker);
            }
            go.await(deadline.toMillis(), TimeUnit.MILLISECONDS);
            long started = System.nanoTime();
            for (Thread worker : workers) {
                worker.join(deadline.toMillis());
                if (worker.isAlive()) {
                    throw new IllegalStateException("bulk upserts not done within " + deadline.toSeconds() + " s");
                }
            }
            double perSecond = ops.size() / ((System.nanoTime() - started) / 1e9);
            if (failed.get() != null) {
                throw new IllegalStateException("bulk upserts failed: " + failed.get(), failed.get());
            }
            students.drop();
            return perSecond;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (java.util.concurrent.BrokenBarrierException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("bulk upserts did not start: " + e, e);
        }
    }

    private List<String> declare(Trial trial, String queue) {
        RabbitAdmin rabbitAdmin = new RabbitAdmin(admin);
        return switch (trial.contestant()) {
            case ORDERLESS -> {
                QueueTopology.declare(admin, queue, queue + ".dlq");
                yield List.of(queue);
            }
            case UNGUARDED -> {
                rabbitAdmin.declareQueue(QueueBuilder.durable(queue).quorum().build());
                yield List.of(queue);
            }
            case SINGLE_ACTIVE -> {
                rabbitAdmin.declareQueue(QueueBuilder.durable(queue).quorum().singleActiveConsumer().build());
                yield List.of(queue);
            }
            case PARTITIONED -> {
                int partitions = trial.fault() == Fault.SCALE_OUT ? 4 : trial.consumers();
                List<String> lanes = new ArrayList<>();
                for (int p = 0; p < partitions; p++) {
                    Queue lane = QueueBuilder.durable(queue + ".p" + p).quorum().singleActiveConsumer().build();
                    rabbitAdmin.declareQueue(lane);
                    lanes.add(lane.getName());
                }
                yield lanes;
            }
        };
    }

    /**
     * Starts consumer process {@code p}. Partitioned: process p owns lane p (one process alone owns
     * them all; a process joining later registers on every lane, a standby as SAC makes it).
     */
    private ConsumerProcess start(Trial trial, int p, int processes, List<String> queues, String collection, Tally tally,
                                  Stuck stuck, boolean initial) {
        ConsumerProcess process = new ConsumerProcess(p, rabbit, mongoHost, trial.latency(), tally.roundTrips());
        // in the process's own threads, so that its CPU is measured apart from the rest of this JVM
        process.within(() -> startConsumers(trial, process, p, processes, queues, collection, tally, stuck, initial));
        return process;
    }

    private void startConsumers(Trial trial, ConsumerProcess process, int p, int processes, List<String> queues,
                                String collection, Tally tally, Stuck stuck, boolean initial) {
        MongoCollection<BsonDocument> students = process.mongo.getDatabase(DATABASE)
                .getCollection(collection, BsonDocument.class);
        switch (trial.contestant()) {
            case ORDERLESS -> {
                ObservationRegistry observations = ObservationRegistry.create();
                observations.observationConfig().observationHandler(new OrderlessWatch(tally, stuck, process.id));
                OperationConsumer consumer = OperationConsumer.builder(process.broker,
                                GuardedApplier.create(students, Enrollment.STUDENT_SCHEMA))
                        .options(ConsumerOptions.ofDefaults(queues.get(0)))
                        .meters(new SimpleMeterRegistry())
                        .observations(observations)
                        .start();
                process.runs(consumer);
            }
            case SINGLE_ACTIVE, UNGUARDED -> plain(process, queues.get(0), trial.batched(), students, tally, stuck);
            case PARTITIONED -> {
                boolean alone = initial && processes == 1 && queues.size() > 1;
                for (int lane = 0; lane < queues.size(); lane++) {
                    if (alone || !initial || lane == p) {
                        plain(process, queues.get(lane), trial.batched(), students, tally, stuck);
                    }
                }
            }
        }
    }

    /** The first {@code processes} consumer processes, started at once (one after another, the first would drain alone). */
    private List<ConsumerProcess> startAll(Trial trial, int processes, List<String> queues, String collection, Tally tally,
                                           Stuck stuck) {
        java.util.concurrent.ExecutorService starting = java.util.concurrent.Executors.newFixedThreadPool(processes);
        try {
            List<java.util.concurrent.Future<ConsumerProcess>> started = new ArrayList<>();
            for (int p = 0; p < processes; p++) {
                int id = p;
                started.add(starting.submit(() -> start(trial, id, processes, queues, collection, tally, stuck, true)));
            }
            List<ConsumerProcess> fleet = new ArrayList<>();
            for (java.util.concurrent.Future<ConsumerProcess> process : started) {
                fleet.add(process.get(deadline.toMillis(), TimeUnit.MILLISECONDS));
            }
            return fleet;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("a consumer process did not start: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting consumers", e);
        } finally {
            starting.shutdownNow();
        }
    }

    /** Partitioned, several processes: each lane gets one standby in the next process, for failover. */
    private void standbys(Trial trial, List<ConsumerProcess> fleet, List<String> queues, String collection,
                          Tally tally, Stuck stuck) {
        if (trial.contestant() != Contestant.PARTITIONED || fleet.size() < 2) {
            return;
        }
        for (int lane = 0; lane < queues.size(); lane++) {
            ConsumerProcess standby = fleet.get((lane + 1) % fleet.size());
            MongoCollection<BsonDocument> students = standby.mongo.getDatabase(DATABASE)
                    .getCollection(collection, BsonDocument.class);
            String laneQueue = queues.get(lane);
            standby.within(() -> plain(standby, laneQueue, trial.batched(), students, tally, stuck));
        }
    }

    private void plain(ConsumerProcess process, String queue, boolean batched, MongoCollection<BsonDocument> students,
                       Tally tally, Stuck stuck) {
        SimpleMessageListenerContainer container = container(process, queue, batched);
        if (batched) {
            container.setMessageListener((BatchMessageListener) messages -> {
                if (process.killed()) {
                    throw new IllegalStateException("killed");   // a dead process acks nothing
                }
                tally.handledBy(process.id);
                List<Operation> ops = new ArrayList<>(messages.size());
                for (Message m : messages) {
                    ops.add(envelope.decode(m.getBody()));
                    if (m.getMessageProperties().isRedelivered()) {
                        tally.redelivered(index(m));   // a kill's: held by the dead process, delivered again
                    }
                }
                stuck.maybe(ops.get(0).entity());
                PlainUpserts.applyOrdered(students, ops);
                long now = System.nanoTime();
                for (int i = 0; i < ops.size(); i++) {
                    tally.applied(index(messages.get(i)), ops.get(i).entity(), ops.get(i).seq(), now);
                }
            });
        } else {
            container.setMessageListener((MessageListener) message -> {
                if (process.killed()) {
                    throw new IllegalStateException("killed");   // a dead process acks nothing
                }
                tally.handledBy(process.id);
                Operation op = envelope.decode(message.getBody());
                if (message.getMessageProperties().isRedelivered()) {
                    tally.redelivered(index(message));
                }
                stuck.maybe(op.entity());
                PlainUpserts.apply(students, op);
                tally.applied(index(message), op.entity(), op.seq(), System.nanoTime());
            });
        }
        container.start();
        process.runs(container::stop);
    }

    private static SimpleMessageListenerContainer container(ConsumerProcess process, String queue, boolean batched) {
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(process.broker);
        container.setQueueNames(queue);
        container.setConcurrentConsumers(1);
        container.setAcknowledgeMode(AcknowledgeMode.AUTO);
        container.setMissingQueuesFatal(false);
        container.setRecoveryInterval(1000);
        container.setShutdownTimeout(30_000);   // a stuck handler is let finish, as a graceful stop would
        container.setErrorHandler(t -> { });    // a killed process's failures: requeued, and said by the table
        if (batched) {
            container.setConsumerBatchEnabled(true);
            container.setBatchSize(Trial.BATCH);
            container.setReceiveTimeout(20);        // as orderless gathers a batch: both timeouts 20 ms
            container.setBatchReceiveTimeout(20);
            container.setPrefetchCount(2 * Trial.BATCH);
        } else {
            container.setPrefetchCount(250);   // Spring AMQP's default
        }
        return container;
    }

    static int index(Message message) {
        Object index = message.getMessageProperties().getHeader(INDEX);
        return ((Number) index).intValue();
    }

    /**
     * Publishes {@code ops} in order with confirms, each to its lane; {@code perSecond} 0 publishes as fast
     * as the broker confirms. {@code after} runs after each message.
     */
    private void publish(List<Operation> ops, List<String> queues, Tally tally, int perSecond, BooleanSupplier after) {
        RabbitTemplate template = new RabbitTemplate(admin);
        long start = System.nanoTime();
        int window = 200;
        for (int from = 0; from < ops.size(); from += window) {
            int to = Math.min(ops.size(), from + window);
            int first = from;
            template.invoke(t -> {
                for (int i = first; i < to; i++) {
                    if (perSecond > 0) {
                        long due = start + (long) (i * 1e9 / perSecond);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                    }
                    Operation op = ops.get(i);
                    MessageProperties properties = new MessageProperties();
                    properties.setHeader(INDEX, i);
                    String lane = queues.get(queues.size() == 1 ? 0 : Contestant.partition(op.entity(), queues.size()));
                    tally.published(i, System.nanoTime());
                    t.send("", lane, new Message(envelope.encode(op), properties));
                    after.getAsBoolean();
                }
                t.waitForConfirmsOrDie(deadline.toMillis());
                return null;
            });
        }
    }

    private int ready(String queue) {
        java.util.Properties properties = new RabbitAdmin(admin).getQueueProperties(queue);
        return properties == null ? 0 : ((Number) properties.get(RabbitAdmin.QUEUE_MESSAGE_COUNT)).intValue();
    }

    private void await(BooleanSupplier condition, String what) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("trial abandoned: not " + what + " within " + deadline.toSeconds() + " s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /**
     * Students whose stored state differs from the oracle's replay of the ops in seq order; {@code guarded}: the
     * documents are orderless's (the guarded apply), not plain upserts'.
     */
    static int diverged(boolean guarded, List<Operation> ops, MongoCollection<BsonDocument> students) {
        Map<String, EntityState> expected = new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops);
        Map<String, PlainUpserts.Plain> stored = new HashMap<>();
        for (BsonDocument doc : students.find()) {
            String id = doc.getString("_id").getValue();
            stored.put(id, guarded
                    ? PlainUpserts.Plain.of(EntityState.of(doc, Enrollment.STUDENT_SCHEMA))
                    : PlainUpserts.Plain.of(doc));
        }
        int diverged = 0;
        for (Map.Entry<String, EntityState> e : expected.entrySet()) {
            if (!PlainUpserts.Plain.of(e.getValue()).equals(stored.get(e.getKey()))) {
                diverged++;
            }
        }
        return diverged;
    }

    @Override
    public void close() {
        admin.destroy();
        direct.close();
        toMongo.close();
    }
}
