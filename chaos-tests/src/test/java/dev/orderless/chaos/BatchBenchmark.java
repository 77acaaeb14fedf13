package dev.orderless.chaos;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.demo.Enrollment;
import dev.orderless.testing.TcpProxy;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * A first measure of {@link GuardedApplier#applyAll} beside {@link GuardedApplier#apply}, one thread, the
 * same ops on collections of their own, with no added latency and with 2 ms per round trip (a TCP
 * proxy). Round trips are the commands the driver sent (a {@link CommandListener}), so nothing is
 * estimated. Not part of the test run:
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Dtest=BatchBenchmark -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
class BatchBenchmark {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final int BATCH = 50;

    @Test
    void run() throws Exception {
        LongAdder commands = new LongAdder();
        CommandListener counting = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                commands.increment();
            }
        };
        try (MongoBackend mongo = Backends.mongo()) {
            String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
            try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
                 MongoClient fast = client(mongo.connectionString(), counting);
                 MongoClient slow = client("mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true", counting)) {
                proxy.latency(Duration.ofMillis(1));   // each way: 2 ms per round trip
                System.out.println("| added latency | per-message ops/s | batched ops/s (" + BATCH + ") | speedup"
                        + " | round trips/op per-message | batched | client CPU µs/op per-message | batched |");
                System.out.println("|---|---|---|---|---|---|---|---|");
                measure("warm-up", fast.getDatabase(MongoBackend.freshDatabaseName("warm")), 6000, commands);
                measure("none", fast.getDatabase(MongoBackend.freshDatabaseName("batch")), 8000, commands);
                measure("2 ms", slow.getDatabase(MongoBackend.freshDatabaseName("batch_slow")), 1600, commands);
            }
        }
    }

    private static MongoClient client(String uri, CommandListener listener) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .addCommandListener(listener).build());
    }

    private static void measure(String latency, MongoDatabase db, int count, LongAdder commands) {
        List<Operation> ops = ApplierBenchmark.mixedOps(count, ApplierBenchmark.ENTITIES, 1, new Random(count));
        MongoCollection<BsonDocument> one = db.getCollection("one", BsonDocument.class);
        MongoCollection<BsonDocument> all = db.getCollection("all", BsonDocument.class);
        GuardedApplier single = GuardedApplier.create(one, Enrollment.STUDENT_SCHEMA);
        GuardedApplier batched = GuardedApplier.create(all, Enrollment.STUDENT_SCHEMA);
        double[] perMessage = new double[3];
        double[] batch = new double[3];
        int slices = 4;
        int slice = count / slices;
        for (int s = 0; s < slices; s++) {   // alternating slices: warm-up and noise weigh on both alike
            List<Operation> part = ops.subList(s * slice, (s + 1) * slice);
            add(perMessage, commands, () -> part.forEach(single::apply));
            add(batch, commands, () -> {
                for (int from = 0; from < part.size(); from += BATCH) {
                    for (BatchResult r : batched.applyAll(part.subList(from, Math.min(part.size(), from + BATCH)))) {
                        if (!(r instanceof BatchResult.Done)) {
                            throw new IllegalStateException("not applied: " + r);
                        }
                    }
                }
            });
        }
        db.drop();
        int n = slice * slices;
        if (!latency.equals("warm-up")) {
            System.out.printf("| %s | %,.0f | %,.0f | %.2f | %.2f | %.3f | %.0f | %.0f |%n", latency, n / perMessage[0],
                    n / batch[0], perMessage[0] / batch[0], perMessage[1] / n, batch[1] / n, perMessage[2] / n,
                    batch[2] / n);
        }
    }

    /** Adds seconds, commands and thread CPU microseconds of {@code work} to {@code into}. */
    private static void add(double[] into, LongAdder commands, Runnable work) {
        long before = commands.sum();
        long cpu = THREADS.getCurrentThreadCpuTime();
        long started = System.nanoTime();
        work.run();
        into[0] += (System.nanoTime() - started) / 1e9;
        into[1] += commands.sum() - before;
        into[2] += (THREADS.getCurrentThreadCpuTime() - cpu) / 1e3;
    }
}
