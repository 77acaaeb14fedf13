package dev.orderless.oracle;

import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.TransientException;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.bson.BsonDocument;

/**
 * The convergence guarantee as properties: for random histories of add, remove, assign and delete over
 * few entities and elements, the documents the guarded applier stores equal the oracle's, whatever the
 * delivery order, duplication and number of threads. Every history is applied to a collection of its
 * own (mongo-java-server scans a collection for compound filters, so small collections keep the run
 * fast); the counts of tries, deliveries and outcomes are printed at the end.
 */
class ConvergencePropertiesTest {
    private static MongoBackend backend;
    private static MongoClient client;
    private static MongoDatabase db;
    private static ExecutorService pool;
    private static final AtomicLong PREFIXES = new AtomicLong();
    private static final Map<String, LongAdder> TRIES = new ConcurrentHashMap<>();
    private static final Map<String, Map<Outcome, LongAdder>> COUNTS = new ConcurrentHashMap<>();
    private static final LongAdder TRANSIENT_RETRIES = new LongAdder();
    private static final ReferenceModel ORACLE = new ReferenceModel(Histories.SCHEMA);

    @BeforeContainer
    static void start() {
        backend = Backends.mongo();
        client = backend.newClient();
        db = client.getDatabase(MongoBackend.freshDatabaseName("convergence"));
        pool = Executors.newFixedThreadPool(8);
    }

    @AfterContainer
    static void stop() {
        COUNTS.forEach((property, outcomes) -> System.out.println("[convergence] " + property + ": "
                + TRIES.get(property).sum() + " tries, " + outcomes.values().stream().mapToLong(LongAdder::sum).sum()
                + " deliveries, outcomes " + outcomes));
        System.out.println("[convergence] " + TRIES.values().stream().mapToLong(LongAdder::sum).sum()
                + " tries in all, " + PREFIXES.get() + " histories applied, " + TRANSIENT_RETRIES.sum()
                + " applies repeated after a transient error, on " + backend.description());
        pool.shutdownNow();
        db.drop();
        client.close();
        backend.close();
    }

    @Property(tries = 250)
    void every_delivery_order_of_a_short_history_converges(@ForAll("short") List<Histories.Step> steps)
            throws Exception {
        String property = "every order of 1..5 ops (1 thread)";
        tried(property);
        List<Integer> positions = java.util.stream.IntStream.range(0, steps.size()).boxed().toList();
        for (List<Integer> order : Histories.permutations(positions)) {
            String prefix = nextPrefix();
            List<Operation> history = Histories.operations(steps, prefix);
            List<Operation> delivered = order.stream().map(history::get).toList();
            check(prefix, history, applier -> applyFrom(1, applier, property, delivered));
        }
    }

    @Property(tries = 450)
    void a_shuffled_long_history_with_duplicates_converges_from_one_thread(@ForAll("long") List<Histories.Step> steps,
                                                                           @ForAll long seed) throws Exception {
        shuffledWithDuplicates(steps, seed, 1);
    }

    @Property(tries = 300)
    void a_shuffled_long_history_with_duplicates_converges_from_eight_threads(@ForAll("long") List<Histories.Step> steps,
                                                                              @ForAll long seed) throws Exception {
        shuffledWithDuplicates(steps, seed, 8);
    }

    private static void shuffledWithDuplicates(List<Histories.Step> steps, long seed, int threads) throws Exception {
        String property = "shuffled 10..60 ops + 20% duplicates (" + threads + (threads == 1 ? " thread)" : " threads)");
        tried(property);
        String prefix = nextPrefix();
        List<Operation> history = Histories.operations(steps, prefix);
        List<Operation> delivered = Histories.delivery(history, 0.2, new Random(seed));
        check(prefix, history, applier -> applyFrom(threads, applier, property, delivered));
    }

    @Provide("short")
    Arbitrary<List<Histories.Step>> shortHistories() {
        return Histories.steps(1, 5, 2);
    }

    @Provide("long")
    Arbitrary<List<Histories.Step>> longHistories() {
        return Histories.steps(10, 60, 3);
    }

    /** Applies {@code delivered} to a fresh collection, checks it against the oracle, and drops it. */
    private static void check(String prefix, List<Operation> history, Applying applying) throws Exception {
        MongoCollection<BsonDocument> collection = db.getCollection(prefix, BsonDocument.class);
        try {
            applying.apply(GuardedApplier.create(collection, Histories.SCHEMA));
            assertConverged(collection, history);
        } finally {
            collection.drop();
        }
    }

    interface Applying {
        void apply(GuardedApplier applier) throws Exception;
    }

    /**
     * The applier's contract: a {@link TransientException} means "not applied, apply again". The embedded
     * server can drop a connection when it encodes a document another thread is changing (real MongoDB
     * cannot); the driver retries the read once, and here, as a consumer would, the apply is repeated.
     * Every such retry is counted and printed, so it cannot hide.
     */
    private static Outcome applyAsAConsumerWould(GuardedApplier applier, Operation op) {
        for (int attempt = 1; ; attempt++) {
            try {
                return applier.apply(op);
            } catch (TransientException e) {
                TRANSIENT_RETRIES.increment();
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    /** Applies {@code delivered} from {@code threads} threads taking from one queue, all started at once. */
    private static void applyFrom(int threads, GuardedApplier applier, String property, List<Operation> delivered)
            throws Exception {
        ConcurrentLinkedQueue<Operation> queue = new ConcurrentLinkedQueue<>(delivered);
        if (threads == 1) {
            queue.forEach(op -> count(property, applyAsAConsumerWould(applier, op)));
            return;
        }
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            workers.add(pool.submit(() -> {
                start.await();
                for (Operation op = queue.poll(); op != null; op = queue.poll()) {
                    count(property, applyAsAConsumerWould(applier, op));
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> worker : workers) {
            worker.get(60, TimeUnit.SECONDS);
        }
    }

    private static void count(String property, Outcome outcome) {
        assertThat(outcome).as("no collisions or horizon in unique-seq histories without compaction")
                .isIn(Outcome.APPLIED, Outcome.SUPERSEDED, Outcome.DUPLICATE);
        COUNTS.computeIfAbsent(property, p -> {
            Map<Outcome, LongAdder> m = new EnumMap<>(Outcome.class);
            for (Outcome o : Outcome.values()) {
                m.put(o, new LongAdder());
            }
            return m;
        }).get(outcome).increment();
    }

    private static void assertConverged(MongoCollection<BsonDocument> collection, List<Operation> history) {
        Map<String, EntityState> expected = ORACLE.replay(history);
        Map<String, EntityState> stored = new java.util.TreeMap<>();
        // every entity an operation names is in the oracle's map, so no other document can belong to this try
        collection.find(in("_id", expected.keySet())).forEach(doc ->
                stored.put(doc.getString("_id").getValue(), EntityState.of(doc, Histories.SCHEMA)));
        assertThat(stored).as("history %s", history).isEqualTo(expected);
    }

    private static String nextPrefix() {
        return "h" + PREFIXES.incrementAndGet();
    }

    private static void tried(String property) {
        TRIES.computeIfAbsent(property, p -> new LongAdder()).increment();
    }
}
