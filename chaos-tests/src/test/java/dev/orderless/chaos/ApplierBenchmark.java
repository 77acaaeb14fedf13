package dev.orderless.chaos;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.addToSet;
import static com.mongodb.client.model.Updates.pull;
import static com.mongodb.client.model.Updates.set;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.UpdateOptions;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.MongoBackend;
import dev.orderless.demo.Enrollment;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The guarded applier beside plain unguarded upserts of the same ops: both run the same op list, each on
 * a collection of its own, in alternating slices (guarded, unguarded, guarded, ...), so that warm-up,
 * garbage collection and a noisy machine weigh on both alike. Besides ops/s it measures where the time
 * goes: the CPU time of the applying threads and, on the embedded MongoDB, of the server's threads.
 */
final class ApplierBenchmark {
    static final int ENTITIES = 1000;
    private static final int SLICES = 4;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** Guarded and unguarded figures for one configuration; server CPU is NaN off the embedded MongoDB. */
    record Measured(double guardedRate, double plainRate, double roundTripsPerOp, double guardedClientMicros,
                    double plainClientMicros, double guardedServerMicros, double plainServerMicros) {
    }

    private ApplierBenchmark() {
    }

    static Measured measure(MongoDatabase db, MongoBackend mongo, int threads, int ops) throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        MongoCollection<BsonDocument> guardedColl = db.getCollection("g" + System.nanoTime(), BsonDocument.class);
        MongoCollection<BsonDocument> plainColl = db.getCollection("u" + System.nanoTime(), BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(guardedColl, Enrollment.STUDENT_SCHEMA,
                ApplierOptions.ofDefaults().withMeters(meters));
        UpdateOptions upsert = new UpdateOptions().upsert(true);
        List<Operation> work = mixedOps(ops, ENTITIES, 1, new Random(ops + threads));
        Run guarded = new Run();
        Run plain = new Run();
        int slice = (ops + SLICES - 1) / SLICES;
        for (int from = 0; from < ops; from += slice) {
            List<Operation> part = work.subList(from, Math.min(ops, from + slice));
            guarded.add(part, threads, mongo, applier::apply);
            plain.add(part, threads, mongo, op -> plainUpsert(plainColl, op, upsert));
        }
        guardedColl.drop();
        plainColl.drop();
        // every write that matched nothing is followed by one read: round trips = applied + 2 x retries
        double applied = meters.get("orderless.apply.outcomes").tag("outcome", "applied").counter().count();
        double retries = meters.get("orderless.apply.retries").counter().count();
        return new Measured(guarded.rate(), plain.rate(), (applied + 2 * retries) / ops, guarded.clientMicros(),
                plain.clientMicros(), guarded.serverMicros(mongo), plain.serverMicros(mongo));
    }

    /** Time and CPU summed over the slices of one side. */
    private static final class Run {
        long nanos;
        long ops;
        final LongAdder clientCpu = new LongAdder();
        long serverCpu;

        void add(List<Operation> part, int threads, MongoBackend mongo, Consumer<Operation> apply)
                throws Exception {
            AtomicLong next = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                workers.add(pool.submit(() -> {
                    start.await();
                    long cpu = THREADS.getCurrentThreadCpuTime();
                    for (long i = next.getAndIncrement(); i < part.size(); i = next.getAndIncrement()) {
                        apply.accept(part.get((int) i));
                    }
                    clientCpu.add(THREADS.getCurrentThreadCpuTime() - cpu);
                    return null;
                }));
            }
            long server = serverCpu(mongo);
            long began = System.nanoTime();
            start.countDown();
            for (Future<?> w : workers) {
                w.get(10, TimeUnit.MINUTES);
            }
            nanos += System.nanoTime() - began;
            serverCpu += serverCpu(mongo) - server;
            ops += part.size();
            pool.shutdownNow();
        }

        double rate() {
            return ops / (nanos / 1e9);
        }

        double clientMicros() {
            return clientCpu.sum() / 1e3 / ops;
        }

        double serverMicros(MongoBackend mongo) {
            return mongo instanceof EmbeddedMongo ? serverCpu / 1e3 / ops : Double.NaN;
        }
    }

    /** CPU time of the embedded server's worker threads (mongo-java-server names them), 0 elsewhere. */
    private static long serverCpu(MongoBackend mongo) {
        if (!(mongo instanceof EmbeddedMongo)) {
            return 0;
        }
        long sum = 0;
        for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("mongo-server-worker")) {
                sum += Math.max(0, THREADS.getThreadCpuTime(info.getThreadId()));
            }
        }
        return sum;
    }

    static void plainUpsert(MongoCollection<BsonDocument> coll, Operation op, UpdateOptions upsert) {
        if (op instanceof Operation.Add add) {
            coll.updateOne(eq("_id", op.entity()), addToSet("classes", new BsonDocument("name", new BsonString(add.element()))), upsert);
        } else if (op instanceof Operation.Remove remove) {
            coll.updateOne(eq("_id", op.entity()), pull("classes", new BsonDocument("name", new BsonString(remove.element()))), upsert);
        } else if (op instanceof Operation.Assign assign) {
            coll.updateOne(eq("_id", op.entity()), set("name", assign.value()), upsert);
        }
    }

    /** {@code count} random ops over {@code entities} entities, with seqs {@code firstSeq, firstSeq + 1, ...}. */
    static List<Operation> mixedOps(int count, int entities, long firstSeq, Random random) {
        List<Operation> ops = new ArrayList<>(count);
        for (long i = firstSeq; i < firstSeq + count; i++) {
            String entity = "s" + random.nextInt(entities);
            String course = "C" + random.nextInt(10);
            int kind = random.nextInt(10);
            ops.add(kind < 5 ? Operation.add(entity, i, "classes", course)
                    : kind < 8 ? Operation.remove(entity, i, "classes", course)
                    : Operation.assign(entity, i, "name", new BsonString("N" + i)));
        }
        return ops;
    }
}
