package dev.orderless.chaos;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * Counters beside sets, part of {@link Benchmark}: what a batched increment costs next to a batched add (round trips
 * and time per op, measured side by side in one run, 2 ms per round trip), the size of a counter's document over
 * 10,000 increments with compaction and without, and one hot counter taking 1,000,000 increments within the grace
 * (no compaction), shuffled with duplicates: its document's size and the round trips per increment. Returns its part
 * of the {@code BENCH} line. On its own:
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=CountersBenchmark
 * </pre>
 */
class CountersBenchmark {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().set(SetField.of("classes", "name"))
            .counter("credits").build();
    private static final int OPS = 2_000;
    private static final int ENTITIES = 50;
    private static final int BATCH = 50;

    @Test
    void run() throws Exception {
        try (MongoBackend mongo = Backends.mongo()) {
            String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
            try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017)) {
                proxy.latency(Duration.ofMillis(1));   // each way: 2 ms per round trip
                System.out.println(measure(mongo, "mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true",
                        text -> System.out.println("[bench] " + text)));
            }
        }
    }

    static String measure(MongoBackend mongo, String delayedUri, Consumer<String> line) {
        LongAdder commands = new LongAdder();
        try (MongoClient slow = ConsumerBatchBenchmark.counting(delayedUri, commands);
             MongoClient fast = mongo.newClient()) {
            String name = MongoBackend.freshDatabaseName("bench_counters");
            GuardedApplier applier = GuardedApplier.create(slow.getDatabase(name).getCollection("students",
                    BsonDocument.class), SCHEMA);
            for (int e = 0; e < ENTITIES; e++) {   // the documents exist: the steady state
                applier.apply(Operation.increment("s" + e, 1, "credits", 0));
            }
            double[] adds = new double[2];
            double[] increments = new double[2];
            for (int round = 0; round < 4; round++) {   // alternating, the first of each a warm-up
                double[] a = batched(applier, commands, round, false);
                double[] i = batched(applier, commands, round, true);
                if (round > 0) {
                    for (int k = 0; k < 2; k++) {
                        adds[k] += a[k] / 3;
                        increments[k] += i[k] / 3;
                    }
                }
            }
            line.accept("## Counters beside sets");
            line.accept("");
            line.accept(String.format(Locale.ROOT, "%,d operations over %d entities in batches of %d, 2 ms per round"
                    + " trip, adds and increments alternating in one run (after a warm-up of each).", OPS, ENTITIES, BATCH));
            line.accept("");
            line.accept("| operation | round trips/op | ms/op | ratio to adds |");
            line.accept("|---|---|---|---|");
            line.accept(String.format(Locale.ROOT, "| add | %.3f | %.3f | 1.00 |", adds[0], adds[1]));
            line.accept(String.format(Locale.ROOT, "| increment | %.3f | %.3f | %.2f |", increments[0], increments[1],
                    increments[1] / adds[1]));
            line.accept("");
            long[] without = documentSize(fast.getDatabase(name).getCollection("sized", BsonDocument.class), false);
            long[] with = documentSize(fast.getDatabase(name).getCollection("compacted", BsonDocument.class), true);
            line.accept("One counter's document, 10,000 increments one after another; with compaction every 100 (grace"
                    + " passed): its size in bytes.");
            line.accept("");
            line.accept("| increments | without compaction | with compaction |");
            line.accept("|---|---|---|");
            int[] points = {100, 1_000, 10_000};
            for (int p = 0; p < points.length; p++) {
                line.accept(String.format(Locale.ROOT, "| %,d | %,d | %,d |", points[p], without[p], with[p]));
            }
            line.accept("");
            HotCounter local = hotCounter(mongo, name, "hot", HOT_INCREMENTS, WINDOW);
            HotCounter global = hotCounter(mongo, name, "hot_shuffled", GLOBAL_INCREMENTS, GLOBAL_INCREMENTS);
            line.accept(String.format(Locale.ROOT, "One hot counter, %,d increments (seqs 1 to %,d, as a stamper per"
                    + " entity gives them) within the grace, no compaction, in batches of %d, each delivered once and a"
                    + " fifth of them again, shuffled within windows of %,d (as competing consumers and their prefetch"
                    + " reorder); and %,d shuffled over all of them, the worst order. Document size in bytes, largest"
                    + " seen (every %,d messages) and at the end; MongoDB round trips per message delivered (duplicates included):", HOT_INCREMENTS,
                    HOT_INCREMENTS, BATCH, WINDOW, GLOBAL_INCREMENTS, SAMPLE));
            line.accept("");
            line.accept("| increments | shuffled within | largest document | at the end | round trips per message |");
            line.accept("|---|---|---|---|---|");
            for (HotCounter hot : List.of(local, global)) {
                line.accept(String.format(Locale.ROOT, "| %,d | %,d | %,d | %,d | %.3f |", hot.increments(), hot.window(),
                        hot.largest(), hot.last(), hot.roundTrips()));
            }
            line.accept("");
            line.accept(String.format(Locale.ROOT, "(One entry per increment, as counters kept them before issue 50"
                    + " (468,996 bytes after 10,000), would be about %,d bytes at %,d: past MongoDB's 16 MB limit after"
                    + " about 350,000.)", 468_996L * (HOT_INCREMENTS / 10_000), HOT_INCREMENTS));
            line.accept("");
            fast.getDatabase(name).drop();
            return String.format(Locale.ROOT, "increment_round_trips_per_op=%.3f add_round_trips_per_op=%.3f"
                            + " counter_doc_bytes_10k_compacted=%d counter_doc_bytes_10k_uncompacted=%d"
                            + " hot_counter_1m_doc_bytes_largest=%d hot_counter_1m_doc_bytes_end=%d"
                            + " hot_counter_1m_round_trips_per_increment=%.3f hot_counter_shuffled_doc_bytes_largest=%d",
                    increments[0], adds[0], with[2], without[2], local.largest(), local.last(), local.roundTrips(),
                    global.largest());
        }
    }

    private static final int HOT_INCREMENTS = 1_000_000;
    private static final int WINDOW = 1_000;
    private static final int GLOBAL_INCREMENTS = 20_000;
    private static final int SAMPLE = 2_000;

    /** What one hot counter's run measured. */
    record HotCounter(int increments, int window, long largest, long last, double roundTrips) {
    }

    /**
     * {@code increments} increments of one counter (seqs 1 to n, deltas 1 to 9), each delivered once and a fifth of
     * them again, shuffled within successive windows of {@code window} seqs, applied in batches of {@link #BATCH}.
     */
    private static HotCounter hotCounter(MongoBackend mongo, String database, String collectionName, int increments,
                                         int window) {
        LongAdder commands = new LongAdder();
        try (MongoClient client = ConsumerBatchBenchmark.counting(mongo.connectionString(), commands)) {
            MongoCollection<BsonDocument> collection = client.getDatabase(database).getCollection(collectionName,
                    BsonDocument.class);
            GuardedApplier applier = GuardedApplier.create(collection, SCHEMA);
            java.util.Random random = new java.util.Random(50);
            long largest = 0;
            long delivered = 0;
            long started = System.nanoTime();
            List<Operation> pending = new ArrayList<>();
            for (int from = 1; from <= increments; from += window) {
                List<Operation> block = new ArrayList<>();
                for (long seq = from; seq < Math.min(from + (long) window, increments + 1L); seq++) {
                    Operation op = Operation.increment("hot", seq, "credits", 1 + random.nextInt(9));
                    block.add(op);
                    if (random.nextInt(5) == 0) {
                        block.add(op);
                    }
                }
                java.util.Collections.shuffle(block, random);
                pending.addAll(block);
                while (pending.size() >= BATCH) {
                    List<Operation> batch = new ArrayList<>(pending.subList(0, BATCH));
                    pending.subList(0, BATCH).clear();
                    applier.applyAll(batch);
                    delivered += batch.size();
                    if (delivered % SAMPLE < BATCH) {
                        largest = Math.max(largest, bytes(collection));
                    }
                    if (delivered % 100_000 < BATCH) {
                        System.out.printf(Locale.ROOT, "[bench] hot counter: %,d messages, largest document %,d bytes,"
                                + " %.0f s%n", delivered, largest, (System.nanoTime() - started) / 1e9);
                    }
                }
            }
            if (!pending.isEmpty()) {
                applier.applyAll(pending);
                delivered += pending.size();
            }
            long last = bytes(collection);
            return new HotCounter(increments, window, Math.max(largest, last), last, commands.sum() / (double) delivered);
        }
    }

    private static long bytes(MongoCollection<BsonDocument> collection) {
        BsonDocument doc = collection.find(eq("_id", "hot")).first();
        return doc == null ? 0 : new org.bson.RawBsonDocument(doc, new org.bson.codecs.BsonDocumentCodec())
                .getByteBuffer().remaining();
    }

    /** {round trips per op, ms per op} for one round of batched adds or increments. */
    private static double[] batched(GuardedApplier applier, LongAdder commands, int round, boolean increments) {
        List<Operation> ops = new ArrayList<>(OPS);
        for (int i = 0; i < OPS; i++) {
            long seq = 10L + round * (long) OPS + i;
            String entity = "s" + i % ENTITIES;
            ops.add(increments ? Operation.increment(entity, seq, "credits", 1)
                    : Operation.add(entity, seq, "classes", "c" + round + "-" + i));
        }
        commands.reset();
        long start = System.nanoTime();
        for (int from = 0; from < OPS; from += BATCH) {
            applier.applyAll(ops.subList(from, from + BATCH));
        }
        double ms = (System.nanoTime() - start) / 1e6;
        return new double[] {commands.sum() / (double) OPS, ms / OPS};
    }

    /** The document's size in bytes after 100, 1,000 and 10,000 increments. */
    private static long[] documentSize(MongoCollection<BsonDocument> collection, boolean compaction) {
        ManualClock clock = new ManualClock();
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        GuardedApplier applier = GuardedApplier.create(collection, SCHEMA, options);
        TombstoneCompactor compactor = TombstoneCompactor.create(collection, SCHEMA, Duration.ofMinutes(1), options);
        long[] sizes = new long[3];
        for (int i = 1; i <= 10_000; i++) {
            applier.apply(Operation.increment("doc", i, "credits", 1));
            if (i % 100 == 0 && compaction) {
                clock.advance(Duration.ofMinutes(2));
                compactor.compact("doc");
            }
            int slot = i == 100 ? 0 : i == 1_000 ? 1 : i == 10_000 ? 2 : -1;
            if (slot >= 0) {
                sizes[slot] = new org.bson.RawBsonDocument(collection.find(eq("_id", "doc")).first(),
                        new org.bson.codecs.BsonDocumentCodec()).getByteBuffer().remaining();
            }
        }
        return sizes;
    }
}
