package dev.orderless.chaos;

import dev.orderless.backends.rabbit.RabbitBackends;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.demo.Enrollment;
import dev.orderless.message.Envelope;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.TcpProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * The benchmark: one run, one table, every figure a ratio to a baseline measured beside it in the same
 * run, plus the absolute numbers. Not part of the test run (its name does not end in Test):
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Pbench
 * </pre>
 *
 * The table is printed and written to {@code chaos-tests/target/benchmark.md}.
 */
class Benchmark {
    private final StringBuilder md = new StringBuilder();
    private String bench = "";
    private String counters = "";

    @Test
    void run() throws Exception {
        try (MongoBackend mongo = Backends.mongo(); RabbitBackend rabbit = RabbitBackends.rabbit();
             MongoClient direct = mongo.newClient()) {
            String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
            try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
                 MongoClient slow = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true")) {
                proxy.latency(Duration.ofMillis(1));   // each way: 2 ms added to every round trip
                line("# orderless benchmark");
                line("");
                line("Machine: %d cores, Java %s. MongoDB: %s. Broker: %s.", Runtime.getRuntime().availableProcessors(),
                        System.getProperty("java.version"), mongo.description(), rabbit.description());
                line("");
                MongoDatabase fast = direct.getDatabase(MongoBackend.freshDatabaseName("bench"));
                MongoDatabase delayed = slow.getDatabase(MongoBackend.freshDatabaseName("bench_slow"));
                applierThroughput(fast, delayed, mongo);
                ScaleBenchmark.collectionSize(fast, mongo, this::line);
                churn(fast);
                counters = CountersBenchmark.measure(mongo, "mongodb://127.0.0.1:" + proxy.port()
                        + "/?directConnection=true", this::line);
                endToEnd(fast, rabbit);
                ScaleBenchmark.demoAtScale(this::line);
                fast.drop();
                direct.getDatabase(delayed.getName()).drop();
            }
            bench = BatchBenchmark.measure(mongo, rabbit, this::line) + " " + counters;
        }
        Path out = Path.of("target", "benchmark.md");
        Files.writeString(out, md + "\n" + bench + "\n");
        System.out.println("[bench] written to " + out.toAbsolutePath());
        System.out.println(bench);   // the last line of the output, on its own
    }

    private void applierThroughput(MongoDatabase fast, MongoDatabase delayed, MongoBackend mongo) throws Exception {
        line("## Guarded applier vs unguarded plain upserts, and scaling with consumers");
        line("");
        line("Ops: a random mix of add / remove / assign over %d entities, unique seqs. Unguarded: the same ops as"
                + " plain `$addToSet` / `$pull` / `$set` upserts (no order guarantee), run in alternating slices with the"
                + " guarded ones after a warm-up of both. Latency: 1 ms each way through a TCP proxy (2 ms per round"
                + " trip). CPU: microseconds per op of the applying threads and, on the embedded MongoDB, of its server"
                + " threads (guarded / unguarded).", ApplierBenchmark.ENTITIES);
        line("");
        line("| added latency | consumers | guarded ops/s | unguarded ops/s | guarded / unguarded | guarded N / guarded 1"
                + " | round trips per guarded op | applying CPU µs/op | server CPU µs/op |");
        line("|---|---|---|---|---|---|---|---|---|");
        for (int i = 0; i < 3; i++) {   // warm-up of both sides, not reported
            ApplierBenchmark.measure(fast, mongo, 1, 4000);
            ApplierBenchmark.measure(fast, mongo, 4, 4000);
        }
        for (boolean latency : new boolean[] {false, true}) {
            MongoDatabase db = latency ? delayed : fast;
            int ops = latency ? 1600 : 8000;
            double single = 0;
            for (int threads : new int[] {1, 2, 4, 8}) {
                ApplierBenchmark.Measured m = ApplierBenchmark.measure(db, mongo, threads, ops);
                if (threads == 1) {
                    single = m.guardedRate();
                }
                line("| %s | %d | %,.0f | %,.0f | %.2f | %.2f | %.2f | %.0f / %.0f | %s |", latency ? "2 ms" : "none", threads,
                        m.guardedRate(), m.plainRate(), m.guardedRate() / m.plainRate(), m.guardedRate() / single,
                        m.roundTripsPerOp(), m.guardedClientMicros(), m.plainClientMicros(),
                        Double.isNaN(m.guardedServerMicros()) ? "n/a"
                                : String.format("%.0f / %.0f", m.guardedServerMicros(), m.plainServerMicros()));
            }
        }
        line("");
    }

    private void churn(MongoDatabase db) {
        line("## Cost of an op as churn on one document grows");
        line("");
        line("One document; each step enrolls in a new class and then drops it, so every step leaves a tombstone."
                + " Cost: mean time per op over the 100 ops ending at that point. With compaction: tombstones older"
                + " than the grace period are compacted every 100 ops (the compaction itself is not in the window).");
        line("");
        line("| ops on the document | without compaction: ms/op | ratio to fresh | tombstones | with compaction: ms/op | ratio to fresh | tombstones |");
        line("|---|---|---|---|---|---|---|");
        churnRun(db, 2000, false);   // warm-up
        double[][] without = churnRun(db, 10_000, false);
        double[][] with = churnRun(db, 10_000, true);
        int[] points = {100, 1000, 10_000};
        for (int i = 0; i < points.length; i++) {
            line("| %,d | %.3f | %.2f | %,.0f | %.3f | %.2f | %,.0f |", points[i], without[i][0], without[i][0] / without[0][0],
                    without[i][1], with[i][0], with[i][0] / with[0][0], with[i][1]);
        }
        line("");
    }

    /** For the points 100, 1000, 10000: {ms per op over the last 100 ops, tombstones at that point}. */
    private double[][] churnRun(MongoDatabase db, int ops, boolean compaction) {
        MongoCollection<BsonDocument> coll = db.getCollection("churn" + System.nanoTime(), BsonDocument.class);
        ManualClock clock = new ManualClock();
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        GuardedApplier applier = GuardedApplier.create(coll, Enrollment.STUDENT_SCHEMA, options);
        TombstoneCompactor compactor = TombstoneCompactor.create(coll, Enrollment.STUDENT_SCHEMA, Duration.ofMinutes(1), options);
        double[][] points = new double[3][2];
        long windowStart = System.nanoTime();
        for (int i = 1; i <= ops; i++) {
            String course = "C" + ((i + 1) / 2);   // add C1, remove C1, add C2, remove C2, ...
            applier.apply(i % 2 == 1 ? Operation.add("doc", i, "classes", course) : Operation.remove("doc", i, "classes", course));
            if (i % 100 == 0) {
                double msPerOp = (System.nanoTime() - windowStart) / 1e6 / 100;
                int slot = i == 100 ? 0 : i == 1000 ? 1 : i == 10_000 ? 2 : -1;
                if (slot >= 0) {
                    BsonDocument doc = coll.find(eq("_id", "doc")).first();
                    points[slot][0] = msPerOp;
                    points[slot][1] = doc.getArray("deleted_classes", new org.bson.BsonArray()).size();
                }
                if (compaction) {
                    clock.advance(Duration.ofMinutes(2));
                    compactor.compact("doc");
                }
                windowStart = System.nanoTime();
            }
        }
        coll.drop();
        return points;
    }

    private void endToEnd(MongoDatabase db, RabbitBackend rabbit) throws Exception {
        line("## End to end through the broker");
        line("");
        line("The same messages, 4 consumers, prefetch %d, manual acks: orderless with its defaults (batches of %d:"
                + " decode, one bulk guarded apply, an ack each) beside a consumer that only acks, one at a time.",
                ConsumerOptions.DEFAULT_PREFETCH, ConsumerOptions.DEFAULT_BATCH_SIZE);
        line("");
        CachingConnectionFactory cf = new CachingConnectionFactory(rabbit.uri());
        cf.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        cf.setPublisherReturns(true);
        try {
            int messages = 6000;
            double ackOnly = ackOnly(cf, messages);
            double orderless = throughOrderless(cf, db, messages);
            line("| consumer | messages/s | ratio to ack-only |");
            line("|---|---|---|");
            line("| ack only, no database work | %,.0f | 1.00 |", ackOnly);
            line("| orderless: decode, batched guarded apply, ack | %,.0f | %.2f |", orderless, orderless / ackOnly);
            line("");
        } finally {
            cf.destroy();
        }
    }

    private double ackOnly(CachingConnectionFactory cf, int messages) throws Exception {
        String queue = "orderless.bench.ack." + System.nanoTime();
        QueueTopology.declare(cf, queue, queue + ".dlq");
        publish(cf, queue, messages);
        AtomicLong acked = new AtomicLong();
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(cf);
        container.setQueueNames(queue);
        container.setConcurrentConsumers(4);
        container.setPrefetchCount(ConsumerOptions.DEFAULT_PREFETCH);
        container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        container.setMessageListener((ChannelAwareMessageListener) (message, channel) -> {
            channel.basicAck(message.getMessageProperties().getDeliveryTag(), false);
            acked.incrementAndGet();
        });
        container.afterPropertiesSet();
        long began = System.nanoTime();
        container.start();
        Awaitility.await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(10)).until(() -> acked.get() >= messages);
        double rate = messages / ((System.nanoTime() - began) / 1e9);
        container.stop();
        new org.springframework.amqp.rabbit.core.RabbitAdmin(cf).deleteQueue(queue);
        new org.springframework.amqp.rabbit.core.RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        return rate;
    }

    private double throughOrderless(CachingConnectionFactory cf, MongoDatabase db, int messages) throws Exception {
        String queue = "orderless.bench.apply." + System.nanoTime();
        QueueTopology.declare(cf, queue, queue + ".dlq");
        publish(cf, queue, messages);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        GuardedApplier applier = GuardedApplier.create(db.getCollection("e2e", BsonDocument.class), Enrollment.STUDENT_SCHEMA);
        long began = System.nanoTime();
        double rate;
        try (OperationConsumer consumer = OperationConsumer.builder(cf, applier)
                .options(ConsumerOptions.ofDefaults(queue).withConcurrency(4)).meters(meters).start()) {
            Awaitility.await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(10)).until(() ->
                    meters.find("orderless.consume.outcomes").counters().stream().mapToDouble(c -> c.count()).sum() >= messages);
            rate = messages / ((System.nanoTime() - began) / 1e9);   // as ackOnly: not counting the stop
        }
        new org.springframework.amqp.rabbit.core.RabbitAdmin(cf).deleteQueue(queue);
        new org.springframework.amqp.rabbit.core.RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        return rate;
    }

    private static void publish(CachingConnectionFactory cf, String queue, int messages) {
        Envelope envelope = new Envelope();
        List<byte[]> bodies = new ArrayList<>();
        for (Operation op : ApplierBenchmark.mixedOps(messages, ApplierBenchmark.ENTITIES, 1, new Random(5))) {
            bodies.add(envelope.encode(op));
        }
        ConfirmingPublisher.toQueue(cf, queue, PublisherOptions.ofDefaults()).publishRaw(bodies);
    }

    private void line(String format, Object... args) {
        String text = args.length == 0 ? format : String.format(format, args);
        md.append(text).append('\n');
        System.out.println("[bench] " + text);
    }
}
