package dev.orderless.oracle;

import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.TransientException;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.PropertyCheck;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The convergence guarantee as properties: for random histories of add, remove, assign, increment and delete over
 * few entities and elements, the documents the guarded applier stores equal the oracle's, whatever the
 * delivery order, duplication and number of threads. All the histories of a property share one
 * collection: each names its own entities (a prefix per history), and a guarded filter pins {@code _id},
 * so a history sees only its own documents and the collection's size costs nothing. A failure prints the smallest failing history and the seed that replays it; the counts of
 * tries, deliveries and outcomes are printed at the end.
 */
@ExtendWith(MongoExtension.class)
class ConvergencePropertiesTest {
    private static final ReferenceModel ORACLE = new ReferenceModel(Histories.ALL_TYPES);
    private static final AtomicLong HISTORIES = new AtomicLong();
    private static final LongAdder TRANSIENT_RETRIES = new LongAdder();
    private static final Map<String, Integer> TRIES = new ConcurrentHashMap<>();
    private static final Map<String, Map<Outcome, LongAdder>> COUNTS = new ConcurrentHashMap<>();

    @AfterAll
    static void printCounts() {
        COUNTS.forEach((property, outcomes) -> System.out.println("[convergence] " + property + ": "
                + TRIES.get(property) + " tries, " + outcomes.values().stream().mapToLong(LongAdder::sum).sum()
                + " deliveries, outcomes " + outcomes));
        System.out.println("[convergence] " + TRIES.values().stream().mapToInt(Integer::intValue).sum()
                + " tries in all, " + HISTORIES.get() + " histories applied, " + TRANSIENT_RETRIES.sum()
                + " applies repeated after a transient error");
    }

    @Test
    void every_delivery_order_of_a_short_history_converges(MongoDatabase db) {
        String property = "every order of 1..5 ops (1 thread)";
        Store store = Store.in(db);
        run(property, 150, random -> Histories.stepsOfAllTypes(random, 1, 5, 2), (steps, trySeed) -> {
            List<Integer> positions = IntStream.range(0, steps.size()).boxed().toList();
            for (List<Integer> order : Histories.permutations(positions)) {
                String prefix = nextPrefix();
                List<Operation> history = Histories.operations(steps, prefix);
                List<Operation> delivered = order.stream().map(history::get).toList();
                check(store, history, applier -> applyFrom(1, applier, property, delivered));
            }
        });
    }

    @Test
    void a_shuffled_long_history_with_duplicates_converges_from_one_thread(MongoDatabase db) {
        shuffledWithDuplicates(db, 250, 1);
    }

    @Test
    void a_shuffled_long_history_with_duplicates_converges_from_eight_threads(MongoDatabase db) {
        shuffledWithDuplicates(db, 200, 8);
    }

    @Test
    void a_shuffled_long_history_cut_into_random_batches_converges_from_eight_threads(MongoDatabase db) {
        String property = "shuffled 10..60 ops + 20% duplicates, random batches of 1..20, half hinted as present (8 threads)";
        Store store = Store.in(db);
        run(property, 120, random -> Histories.stepsOfAllTypes(random, 10, 60, 3), (steps, trySeed) -> {
            String prefix = nextPrefix();
            List<Operation> history = Histories.operations(steps, prefix);
            Random random = new Random(trySeed);
            List<List<Operation>> batches = batches(Histories.delivery(history, 0.2, random), random, 1, 20);
            check(store, history, applier -> applyBatchesFrom(8, applier, property, batches, hintedHalf(trySeed)));
        });
    }

    @Test
    void a_hot_entitys_shuffled_history_in_large_batches_converges_from_eight_threads(MongoDatabase db) {
        String property = "one hot entity: shuffled 30..80 ops + 20% duplicates, batches of 10..50, half hinted as"
                + " present (8 threads)";
        Store store = Store.in(db);
        run(property, 40, random -> Histories.stepsOfAllTypes(random, 30, 80, 1), (steps, trySeed) -> {
            String prefix = nextPrefix();
            List<Operation> history = Histories.operations(steps, prefix);
            Random random = new Random(trySeed);
            List<List<Operation>> batches = batches(Histories.delivery(history, 0.2, random), random, 10, 50);
            check(store, history, applier -> applyBatchesFrom(8, applier, property, batches, hintedHalf(trySeed)));
        });
    }

    /** {@code delivered} cut into consecutive batches of {@code smallest..largest} ops, sizes drawn from {@code random}. */
    private static List<List<Operation>> batches(List<Operation> delivered, Random random, int smallest, int largest) {
        List<List<Operation>> batches = new ArrayList<>();
        for (int from = 0; from < delivered.size(); ) {
            int to = Math.min(delivered.size(), from + smallest + random.nextInt(largest - smallest + 1));
            batches.add(delivered.subList(from, to));
            from = to;
        }
        return batches;
    }

    /** A hint changes the first write, never the state: a random half of the ops hinted as present, right or wrong. */
    private static Predicate<Operation> hintedHalf(long trySeed) {
        return op -> Math.floorMod(java.util.Objects.hash(op.entity(), op.seq(), trySeed), 2) == 0;
    }

    /** Applies each batch with applyAll from {@code threads} threads; a failed op is applied again, as a consumer would. */
    private static void applyBatchesFrom(int threads, GuardedApplier applier, String property,
                                         List<List<Operation>> batches, Predicate<Operation> hinted) throws Exception {
        Workers.drain(threads, new ConcurrentLinkedQueue<>(batches), batch -> {
            List<BatchResult> results = applier.applyAll(batch, hinted);
            assertThat(results).extracting(BatchResult::op).containsExactlyElementsOf(batch);
            for (BatchResult result : results) {
                if (result instanceof BatchResult.Done done) {
                    count(property, done.op(), done.outcome(), applier);
                } else if (result instanceof BatchResult.Failed failed && failed.error() instanceof TransientException) {
                    TRANSIENT_RETRIES.increment();
                    count(property, result.op(), applyAsAConsumerWould(applier, result.op()), applier);
                } else {
                    throw new AssertionError("a good op was not applied: " + result);
                }
            }
        });
    }

    private static void shuffledWithDuplicates(MongoDatabase db, int tries, int threads) {
        String property = "shuffled 10..60 ops + 20% duplicates (" + threads + (threads == 1 ? " thread)" : " threads)");
        Store store = Store.in(db);
        run(property, tries, random -> Histories.stepsOfAllTypes(random, 10, 60, 3), (steps, trySeed) -> {
            String prefix = nextPrefix();
            List<Operation> history = Histories.operations(steps, prefix);
            List<Operation> delivered = Histories.delivery(history, 0.2, new Random(trySeed));
            check(store, history, applier -> applyFrom(threads, applier, property, delivered));
        });
    }

    private static void run(String property, int tries, java.util.function.Function<Random, List<Histories.Step>> generator,
                            PropertyCheck.Check<Histories.Step> check) {
        TRIES.put(property, tries);
        PropertyCheck.forAll(property, tries, generator).check(check);
    }

    /** Applies a history to the property's collection and checks its entities against the oracle. */
    private static void check(Store store, List<Operation> history, Applying applying) throws Exception {
        applying.apply(store.applier());
        for (Operation op : history) {
            // each delivery is judged once: two deliveries of one op are never both APPLIED
            assertThat(APPLIED.getOrDefault(key(op), new LongAdder()).sum()).as("deliveries of %s reported APPLIED", op)
                    .isLessThanOrEqualTo(1);
        }
        Map<String, EntityState> expected = ORACLE.replay(history);
        // every entity an operation names is in the oracle's map, and no other history names them
        Map<String, EntityState> stored = EntityState.readAll(store.collection().find(in("_id", expected.keySet())),
                Histories.ALL_TYPES);
        assertThat(stored).as("history %s", history).isEqualTo(expected);
    }

    /** The property's collection, shared by its histories, and the applier on it. */
    private record Store(MongoCollection<BsonDocument> collection, GuardedApplier applier) {
        static Store in(MongoDatabase db) {
            MongoCollection<BsonDocument> collection = db.getCollection("histories", BsonDocument.class);
            return new Store(collection, GuardedApplier.create(collection, Histories.ALL_TYPES));
        }
    }

    interface Applying {
        void apply(GuardedApplier applier) throws Exception;
    }

    /** Applies {@code delivered} from {@code threads} threads taking from one queue, all started at once. */
    private static void applyFrom(int threads, GuardedApplier applier, String property, List<Operation> delivered)
            throws Exception {
        ConcurrentLinkedQueue<Operation> queue = new ConcurrentLinkedQueue<>(delivered);
        if (threads == 1) {
            queue.forEach(op -> count(property, op, applyAsAConsumerWould(applier, op), applier));
            return;
        }
        Workers.drain(threads, queue, op -> count(property, op, applyAsAConsumerWould(applier, op), applier));
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

    /** Deliveries reported APPLIED, per op (histories name entities of their own). */
    private static final Map<String, LongAdder> APPLIED = new ConcurrentHashMap<>();

    private static String key(Operation op) {
        return op.entity() + "\u0000" + op.seq();
    }

    private static void count(String property, Operation op, Outcome outcome, GuardedApplier applier) {
        if (outcome == Outcome.APPLIED) {
            APPLIED.computeIfAbsent(key(op), k -> new LongAdder()).increment();
        }
        if (outcome == Outcome.SEQ_COLLISION || outcome == Outcome.BEYOND_HORIZON) {
            // what the applier saw is gone by now; the document as it is after, to tell the story
            BsonDocument now = applier.reads().find(com.mongodb.client.model.Filters.eq("_id", op.entity())).first();
            assertThat(outcome).as("no collisions or horizon in unique-seq histories without compaction: %s; the"
                    + " document after: %s", op, now == null ? "none" : now.toJson())
                    .isIn(Outcome.APPLIED, Outcome.SUPERSEDED, Outcome.DUPLICATE);
        }
        COUNTS.computeIfAbsent(property, p -> {
            Map<Outcome, LongAdder> m = new EnumMap<>(Outcome.class);
            for (Outcome o : Outcome.values()) {
                m.put(o, new LongAdder());
            }
            return m;
        }).get(outcome).increment();
    }

    private static String nextPrefix() {
        return "h" + HISTORIES.incrementAndGet();
    }
}
