package dev.orderless.chaos;

import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.nin;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.amqp10.Amqp10Consumer;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.demo.ClassRosterProjection;
import dev.orderless.demo.Enrollment;
import dev.orderless.demo.Poison;
import dev.orderless.demo.Rosters;
import dev.orderless.demo.WebApp;
import dev.orderless.history.History;
import dev.orderless.history.HistoryOptions;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import dev.orderless.view.ViewProjection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * One chaos scenario's world. Consumers and feeders reach MongoDB through one proxy and RabbitMQ through
 * a proxy each, so that connections can be cut, slowed and throttled; the test itself (publishing,
 * stamping, checking) talks to both directly.
 */
final class ChaosRig implements AutoCloseable {
    /**
     * A consumer instance: its own proxy and connection to the broker, so it can be killed alone; a recording
     * one also has its own proxy and client to MongoDB ({@code mongo}), so that its writes can be hit alone.
     */
    record Consumer(TcpProxy proxy, AutoCloseable connection, AutoCloseable consumer,
                    java.util.Optional<TcpProxy> mongo, java.util.Optional<MongoClient> mongoClient) {
        Consumer(TcpProxy proxy, AutoCloseable connection, AutoCloseable consumer) {
            this(proxy, connection, consumer, java.util.Optional.empty(), java.util.Optional.empty());
        }

        /** Stops it (what it held goes back to the queue) and closes what it owns. */
        void close() {
            for (AutoCloseable owned : List.of(consumer, connection)) {
                try {
                    owned.close();
                } catch (Exception e) {
                    // a killed consumer's connection is already gone
                }
            }
            proxy.close();
            mongoClient.ifPresent(MongoClient::close);
            mongo.ifPresent(TcpProxy::close);
        }
    }

    /**
     * What a client sends to MongoDB to apply an operation to the students (the {@code update} command naming
     * the collection, in BSON): a recording consumer's proxy that drops it lets the record through and kills
     * the apply.
     */
    static final String APPLY_TO_STUDENTS = "update\u0000\u0009\u0000\u0000\u0000" + Enrollment.STUDENTS + "\u0000";

    /** How often a 0-9-1 consumer that lost its broker connection tries to connect again. */
    static final Duration RECONNECT = Duration.ofMillis(500);

    final long seed;
    final Random random;
    final String queue;
    final String deadLetterQueue;
    final TcpProxy mongoProxy;
    /**
     * The {@code appName} of every MongoDB client the rig's consumers, feeders and leases use (not the test's own,
     * direct one): a fail point ({@code FailPoint}) that names it fails their commands and no other test's.
     */
    final String appName;
    final MongoDatabase direct;
    final MongoCollection<BsonDocument> students;
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final List<Consumer> consumers = new ArrayList<>();
    final List<ViewFeeder> feeders = new ArrayList<>();
    final RabbitBackend rabbit;
    private final ConnectionFactory directRabbit;
    private final MongoClient proxiedClient;
    private final MongoDatabase proxied;
    private final MongoLeaseProvider leases;
    private int poisonPublished;
    private final Set<String> poisonBodies = new HashSet<>();
    /** Student documents written around orderless: malformed ones (in no roster) and hard-deleted ones (gone). */
    private final List<BsonValue> malformed = new ArrayList<>();
    private final Set<String> deleted = new HashSet<>();
    private int published;
    private final String mongoUri;
    /** Whether the scenario's consumers record in the history (then so do those that finish its drain). */
    private boolean recording;
    /** Whether the scenario's consumers are AMQP 1.0 ones (then so are those that finish its drain). */
    private boolean amqp10;

    ChaosRig(MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory directRabbit, MongoDatabase direct, long seed) {
        this.seed = seed;
        this.random = new Random(seed);
        this.rabbit = rabbit;
        this.directRabbit = directRabbit;
        this.direct = direct;
        this.queue = RabbitExtension.uniqueQueue("chaos");
        this.deadLetterQueue = queue + ".dlq";
        QueueTopology.declare(directRabbit, queue, deadLetterQueue);
        this.mongoUri = mongo.connectionString();
        String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
        this.mongoProxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
        this.appName = "chaos-" + Long.toHexString(seed) + "-" + queue.hashCode();
        this.proxiedClient = MongoClients.create("mongodb://127.0.0.1:" + mongoProxy.port()
                + "/?directConnection=true&serverSelectionTimeoutMS=2000&connectTimeoutMS=1000&socketTimeoutMS=5000"
                + "&appName=" + appName);
        this.proxied = proxiedClient.getDatabase(direct.getName());
        this.students = direct.getCollection(Enrollment.STUDENTS, BsonDocument.class);
        LeaseOptions lease = LeaseOptions.ofDefaults().withTtl(Duration.ofMillis(1500), Duration.ofMillis(300));
        this.leases = MongoLeaseProvider.create(proxied.getCollection("leases", BsonDocument.class), lease);
    }

    /** The simulated web application's actions, stamped per student. */
    List<Operation> workload(int ops, int studentCount) {
        return new WebApp(MongoCounterStamper.create(direct.getCollection("seq_counters", BsonDocument.class)),
                studentCount, 12, seed).act(ops);
    }

    /** Publishes every op (some twice), shuffled if asked, with poison mixed in; returns the message count. */
    int publish(List<Operation> ops, boolean shuffle, double duplicateRate, int poison) {
        return publish(ops, shuffle, duplicateRate, poison, PublisherOptions.ofDefaults());
    }

    /** As {@link #publish(List, boolean, double, int)}, the confirming publisher waiting and re-sending as {@code options} say. */
    int publish(List<Operation> ops, boolean shuffle, double duplicateRate, int poison, PublisherOptions options) {
        List<byte[]> bad = Poison.messages(poison, poisonPublished);
        bad.forEach(p -> poisonBodies.add(new String(p, StandardCharsets.UTF_8)));
        List<byte[]> messages = messages(ops, random, shuffle, duplicateRate, bad);
        poisonPublished += poison;
        published += messages.size();
        ConfirmingPublisher.toQueue(directRabbit, queue, options).publishRaw(messages);
        return messages.size();
    }

    /**
     * The bodies a scenario publishes: every op's envelope (a share of them twice), shuffled if asked, {@code poison}
     * inserted at random places; {@code random} decides, so a seed reproduces them. The Kafka scenarios publish the same.
     */
    static List<byte[]> messages(List<Operation> ops, Random random, boolean shuffle, double duplicateRate,
                                 List<byte[]> poison) {
        Envelope envelope = new Envelope();
        List<byte[]> messages = new ArrayList<>();
        for (Operation op : ops) {
            messages.add(envelope.encode(op));
            if (random.nextDouble() < duplicateRate) {
                messages.add(envelope.encode(op));
            }
        }
        if (shuffle) {
            Collections.shuffle(messages, random);
        }
        for (byte[] p : poison) {
            messages.add(random.nextInt(messages.size() + 1), p);
        }
        return messages;
    }

    /** Counts {@code messages} published to the queue around the rig (by an outbox relay): the drain waits for them. */
    void publishedAround(long messages) {
        published += (int) messages;
    }

    /** Writes malformed student documents around orderless, {@code count} of three kinds; returns how many. */
    int writeMalformedStudents(int count) {
        for (int i = 0; i < count; i++) {
            BsonValue id = i % 3 == 2 ? new BsonInt32(1_000_000 + i) : new BsonString("malformed-" + i);
            BsonValue classes = i % 3 == 0 ? new BsonString("CS 101")
                    : new BsonArray(List.of(new BsonDocument("title", new BsonString("no name"))));
            students.insertOne(new BsonDocument("_id", id).append(Enrollment.CLASSES, classes).append("_v", new BsonInt64(1)));
            malformed.add(id);
        }
        return count;
    }

    /** Hard-deletes {@code count} random students that exist (a TTL index or an admin would); returns their ids. */
    List<String> hardDeleteStudents(int count) {
        List<String> ids = new ArrayList<>();
        students.find(nin("_id", malformed)).forEach(d -> ids.add(d.getString("_id").getValue()));
        Collections.shuffle(ids, random);
        List<String> chosen = ids.subList(0, Math.min(count, ids.size()));
        students.deleteMany(in("_id", chosen));
        deleted.addAll(chosen);
        return chosen;
    }

    Consumer startConsumer(int threads) {
        return startConsumer(threads, options -> options);
    }

    /** A consumer whose options are the rig's, tuned by {@code tune} (batches, say). */
    Consumer startConsumer(int threads, java.util.function.UnaryOperator<ConsumerOptions> tune) {
        URI uri = rabbit.uri();
        TcpProxy proxy = TcpProxy.start(uri.getHost(), uri.getPort() < 0 ? 5672 : uri.getPort());
        CachingConnectionFactory connection = new CachingConnectionFactory(uri);
        connection.setHost("127.0.0.1");
        connection.setPort(proxy.port());
        GuardedApplier applier = GuardedApplier.create(proxied.getCollection(Enrollment.STUDENTS, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA, dev.orderless.apply.ApplierOptions.ofDefaults().withMeters(meters));
        OperationConsumer consumer = OperationConsumer.builder(connection, applier)
                .options(tune.apply(ConsumerOptions.ofDefaults(queue).withConcurrency(threads)
                        .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500)))))
                .container(ChaosRig::container)
                .meters(meters).start();
        Consumer started = new Consumer(proxy, connection::destroy, consumer);
        consumers.add(started);
        return started;
    }

    /**
     * The listener container of a 0-9-1 consumer: a consumer that lost its connection tries again every
     * {@link #RECONNECT}, not every 5 s (Spring's default recovery interval), so that a cut costs about as long
     * as it lasts: its first attempt falls in the cut, and with 5 s between attempts a 2 s cut stopped
     * consuming for 5 s.
     */
    private static SimpleMessageListenerContainer container() {
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer();
        container.setRecoveryInterval(RECONNECT.toMillis());
        return container;
    }

    /**
     * A consumer over AMQP 1.0 (RabbitMQ 4 only), through a proxy of its own: its connection is its process's,
     * as far as the broker sees.
     */
    Consumer startAmqp10Consumer(int threads) {
        amqp10 = true;
        URI uri = rabbit.uri();
        TcpProxy proxy = TcpProxy.start(uri.getHost(), uri.getPort() < 0 ? 5672 : uri.getPort());
        URI proxied = URI.create(uri.getScheme() + "://" + uri.getRawUserInfo() + "@127.0.0.1:" + proxy.port()
                + uri.getRawPath());
        com.rabbitmq.client.amqp.Environment environment = new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder()
                .connectionSettings().uri(proxied.toString()).environmentBuilder().build();
        com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build();
        GuardedApplier applier = GuardedApplier.create(this.proxied.getCollection(Enrollment.STUDENTS, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA, dev.orderless.apply.ApplierOptions.ofDefaults().withMeters(meters));
        Amqp10Consumer consumer = Amqp10Consumer.builder(connection, applier)
                .options(ConsumerOptions.ofDefaults(queue).withConcurrency(threads)
                        .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500))))
                .meters(meters).start();
        Consumer started = new Consumer(proxy, environment::close, consumer);
        consumers.add(started);
        return started;
    }

    /**
     * A consumer that records every operation in the students' history before applying it, through a MongoDB
     * proxy of its own.
     */
    Consumer startRecordingConsumer(int threads) {
        if (!recording) {   // decided before the first consumer that records starts, as history.md says
            dev.orderless.history.HistoryBaseline.Begun begun = history().beginBaseline(
                    dev.orderless.history.HistoryBaseline.Start.DETECT);
            if (begun != dev.orderless.history.HistoryBaseline.Begun.COMPLETE) {
                throw new AssertionError("the students' history starts " + begun + ": a scenario that records starts"
                        + " its recording consumers on an empty collection");
            }
        }
        recording = true;
        String[] target = new ConnectionString(mongoUri).getHosts().get(0).split(":");
        TcpProxy mongo = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
        MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + mongo.port()
                + "/?directConnection=true&serverSelectionTimeoutMS=2000&connectTimeoutMS=1000&socketTimeoutMS=5000"
                + "&appName=" + appName);
        MongoDatabase db = client.getDatabase(direct.getName());
        GuardedApplier applier = GuardedApplier.create(db.getCollection(Enrollment.STUDENTS, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA, dev.orderless.apply.ApplierOptions.ofDefaults().withMeters(meters));
        History history = History.of(db.getCollection(History.collectionName(Enrollment.STUDENTS), BsonDocument.class),
                Enrollment.STUDENT_SCHEMA, HistoryOptions.ofDefaults().withMeters(meters));
        URI uri = rabbit.uri();
        TcpProxy proxy = TcpProxy.start(uri.getHost(), uri.getPort() < 0 ? 5672 : uri.getPort());
        CachingConnectionFactory connection = new CachingConnectionFactory(uri);
        connection.setHost("127.0.0.1");
        connection.setPort(proxy.port());
        OperationConsumer consumer = OperationConsumer.builder(connection, applier)
                .options(ConsumerOptions.ofDefaults(queue).withConcurrency(threads)
                        .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500))))
                .history(history)
                .container(ChaosRig::container)
                .meters(meters).start();
        Consumer started = new Consumer(proxy, connection::destroy, consumer, java.util.Optional.of(mongo),
                java.util.Optional.of(client));
        consumers.add(started);
        return started;
    }

    /** The database as the rig's components see it: through the MongoDB proxy, as {@link #appName}. */
    MongoDatabase proxied() {
        return proxied;
    }

    /** The students' history, read directly, checking its reads against the students. */
    History history() {
        return History.of(direct.getCollection(History.collectionName(Enrollment.STUDENTS), BsonDocument.class),
                Enrollment.STUDENT_SCHEMA).withLive(students);
    }

    /** Kills a consumer instance abruptly: its connections die first, as if its process had crashed. */
    void kill(Consumer c) {
        c.proxy().cut();
        c.mongo().ifPresent(TcpProxy::cut);
        c.close();
        consumers.remove(c);
    }

    /** Segments of every scenario's feeders: {@code -Dorderless.chaos.segments=4} runs the suite segmented. */
    static final int SEGMENTS = Integer.getInteger("orderless.chaos.segments", 1);

    ViewFeeder startFeeder(String owner, ViewProjection projection) {
        return startFeeder(owner, projection, SEGMENTS);
    }

    ViewFeeder startFeeder(String owner, ViewProjection projection, int segments) {
        LeaseOptions lease = LeaseOptions.ofDefaults().withTtl(Duration.ofMillis(1500), Duration.ofMillis(300));
        ViewFeeder feeder = ViewFeeder.builder(proxied, Enrollment.STUDENTS,
                        GuardedApplier.create(proxied.getCollection(Enrollment.ROSTERS, BsonDocument.class),
                                Enrollment.ROSTER_SCHEMA), projection, leases)
                .options(FeederOptions.ofDefaults(Enrollment.ROSTER_LEASE).withOwner(owner).withLease(lease)
                        .withPolling(Duration.ofMillis(100), Duration.ofMillis(200)).withSegments(segments))
                .meters(meters).start();
        feeders.add(feeder);
        return feeder;
    }

    ViewFeeder startFeeder(String owner) {
        return startFeeder(owner, new ClassRosterProjection());
    }

    double handled() {
        double sum = 0;
        for (Outcome o : Outcome.values()) {
            sum += meters.find("orderless.consume.outcomes").tag("outcome", o.tag()).counters().stream()
                    .mapToDouble(c -> c.count()).sum();
        }
        return sum + meters.find("orderless.consume.dead_lettered").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    long queued(String name) {
        var info = new RabbitAdmin(directRabbit).getQueueInfo(name);
        return info == null ? -1 : info.getMessageCount();
    }

    /**
     * Until every message is handled: wait for an empty queue and for the consumers to handle what they took
     * from it, stop the consumers (whatever they still held unacked goes back), and if anything came back, drain
     * it with a fresh consumer. Bounded.
     */
    void drain() {
        for (int round = 0; round < 5; round++) {
            Awaitility.await("queue drained").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
                    .until(() -> queued(queue) == 0);
            // an empty queue counts no message a consumer took and has not acked (up to its prefetch): stopped
            // now, the consumers would hand those back, and they would wait below as long as it is bounded (seen:
            // 10 s more for a scenario on RabbitMQ 4). Consumers in other processes are not counted here
            if (!consumers.isEmpty()) {
                try {
                    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                            .until(() -> handled() >= published);
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    // not all handled: what is left comes back below, or is counted as lost
                }
            }
            new ArrayList<>(consumers).forEach(Consumer::close);
            consumers.clear();
            // what was unacked is requeued as the channels close; give the broker a bounded moment to show it
            boolean empty;
            try {
                Awaitility.await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10))
                        .until(() -> queued(queue) == 0);
                empty = true;
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                empty = false;
            }
            if (empty) {
                return;
            }
            if (recording) {
                startRecordingConsumer(2);   // the scenario's history must hold every op applied
            } else if (amqp10) {
                startAmqp10Consumer(2);
            } else {
                startConsumer(2);
            }
        }
        throw new AssertionError("queue '" + queue + "' did not drain");
    }

    /** What the scenario ends with (the view was checked on the way: verify fails if it differs). */
    /**
     * @param increments      the credits' increments among the operations
     * @param creditsDiverged students whose credits (a counter) differ from the oracle's sum
     * @param creditsOff      the credits they differ by, in all (an increment lost or counted twice shows here)
     */
    record Verdict(int published, long diverged, long lost, long deadLettered, long deadLetteredTwice, int poison,
                   long increments, long creditsDiverged, long creditsOff) {
    }

    Verdict verify(List<Operation> ops) {
        long lost = queued(queue);
        Awaitility.await("rosters match the students").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
                .until(() -> Rosters.inView(direct.getCollection(Enrollment.ROSTERS, BsonDocument.class))
                        .equals(Rosters.fromStudents(students.find(nin("_id", malformed)))));
        Map<String, EntityState> expected = new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops);
        expected.keySet().removeAll(deleted);
        Map<String, EntityState> stored = EntityState.readAll(students.find(nin("_id", malformed)),
                Enrollment.STUDENT_SCHEMA);
        long diverged = ReferenceModel.diverged(expected, stored).size();
        long creditsDiverged = 0;
        long creditsOff = 0;
        for (var student : expected.entrySet()) {
            java.math.BigInteger sum = student.getValue().counters().getOrDefault(Enrollment.CREDITS,
                    java.math.BigInteger.ZERO);
            java.math.BigInteger there = stored.containsKey(student.getKey()) ? stored.get(student.getKey()).counters()
                    .getOrDefault(Enrollment.CREDITS, java.math.BigInteger.ZERO) : java.math.BigInteger.ZERO;
            creditsDiverged += sum.equals(there) ? 0 : 1;
            creditsOff += sum.subtract(there).abs().longValue();
        }
        long increments = ops.stream().filter(op -> op instanceof Operation.Increment).count();
        // Dead-lettering is at least once: a consumer killed between the dead letter's confirm and the
        // original's ack gets the original back and dead-letters it again. Count distinct bodies (each
        // poison body is unique), and refuse anything in the dead-letter queue that was not poison.
        Set<String> deadLettered = new HashSet<>();
        int letters = 0;
        RabbitTemplate template = new RabbitTemplate(directRabbit);
        for (Message m = template.receive(deadLetterQueue, 1000); m != null; m = template.receive(deadLetterQueue, 300)) {
            String body = new String(m.getBody(), StandardCharsets.UTF_8);
            assertThat(poisonBodies).as("a dead letter that is not poison: %s", body).contains(body);
            deadLettered.add(body);
            letters++;
        }
        return new Verdict(published, diverged, lost, deadLettered.size(), letters - deadLettered.size(), poisonPublished,
                increments, creditsDiverged, creditsOff);
    }

    @Override
    public void close() {
        new ArrayList<>(consumers).forEach(Consumer::close);
        feeders.forEach(ViewFeeder::close);
        proxiedClient.close();
        mongoProxy.close();
        RabbitAdmin admin = new RabbitAdmin(directRabbit);
        admin.deleteQueue(queue);
        admin.deleteQueue(deadLetterQueue);
    }
}
