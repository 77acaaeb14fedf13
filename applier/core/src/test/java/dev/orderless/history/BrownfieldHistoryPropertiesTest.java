package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.TransientException;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.oracle.Workers;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.PropertyCheck;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The history turned on for a collection that already has data, as a property (issue 37): for random histories,
 * part of each entity's operations (mostly its earlier ones, some held back, some later ones early) is applied
 * without the history by eight threads in batches with duplicates; then the history is turned on with its
 * documented step, the leased {@link HistoryBaseline}, which runs while eight threads record and apply the rest,
 * with redeliveries of the old ones and duplicates, and a pass of {@link History#baseline} once more among them. Then every {@code asOf} of every entity at every seq is
 * {@code Unknowable} or the sequential oracle's state (never {@code Known} and wrong), is {@code Known} from the
 * entity's horizon on, and equals the live document at its last seq; a rebuild into a new collection is exact or
 * says it is incomplete.
 */
@ExtendWith(MongoExtension.class)
class BrownfieldHistoryPropertiesTest {
    private static final ReferenceModel ORACLE = new ReferenceModel(Histories.SCHEMA);
    private static final AtomicLong TRIES = new AtomicLong();
    private static final LongAdder KNOWN = new LongAdder();
    private static final LongAdder UNKNOWABLE = new LongAdder();
    private static final LongAdder BASELINED = new LongAdder();
    private static final LongAdder REBUILT_EXACT = new LongAdder();
    private static final LongAdder RETRIES = new LongAdder();

    @AfterAll
    static void printCounts() {
        System.out.println("[brownfield history] " + KNOWN.sum() + " reads Known (each the oracle's), " + UNKNOWABLE.sum()
                + " Unknowable (below a baseline horizon), " + BASELINED.sum() + " entities taken by a baseline, "
                + REBUILT_EXACT.sum() + " rebuilds exact, " + RETRIES.sum() + " ops applied again after a transient"
                + " error");
    }

    @Test
    void turned_on_with_the_baseline_while_consumers_run_every_read_is_unknowable_or_the_oracles_and_a_rebuild_exact(
            MongoDatabase db) {
        PropertyCheck.forAll("brownfield: 12..40 ops over 4 entities, part applied without the history, the rest"
                        + " recorded with 30% redeliveries of the old and 20% duplicates beside two baselines, batches of"
                        + " 1..12, 8 threads", 12, random -> Histories.steps(random, 12, 40, 4))
                .check((steps, trySeed) -> {
                    String name = "b" + TRIES.incrementAndGet();
                    MongoCollection<BsonDocument> live = db.getCollection(name, BsonDocument.class);
                    GuardedApplier applier = GuardedApplier.create(live, Histories.SCHEMA);
                    History history = History.of(db.getCollection(name + "_history", BsonDocument.class),
                            Histories.SCHEMA).withLive(live);
                    RecordingApplier recording = history.recording(applier);
                    List<Operation> ops = Histories.operations(steps, name + "-");
                    Random random = new Random(trySeed);

                    List<Operation> before = new ArrayList<>();
                    List<Operation> after = new ArrayList<>();
                    split(ops, random, before, after);
                    List<Runnable> withoutHistory = new ArrayList<>();
                    batches(Histories.delivery(before, 0.2, random), random).forEach(batch ->
                            withoutHistory.add(() -> applyAll(applier::applyAll, batch)));
                    run(withoutHistory);

                    List<Operation> rest = new ArrayList<>(after);
                    before.stream().filter(op -> random.nextDouble() < 0.3).forEach(rest::add);   // redeliveries
                    List<Runnable> withHistory = new ArrayList<>();
                    batches(Histories.delivery(rest, 0.2, random), random).forEach(batch ->
                            withHistory.add(() -> applyAll(recording::applyAll, batch)));
                    // the documented step among the first tasks (so beside the consumers), and a pass again later
                    HistoryBaseline baseline = HistoryBaseline.create(history, MongoLeaseProvider.create(
                            db.getCollection(name + "_leases", BsonDocument.class), LeaseOptions.ofDefaults()),
                            "p" + name, Duration.ofMinutes(1));
                    withHistory.add(random.nextInt(Math.min(3, withHistory.size() + 1)), () -> BASELINED.add(
                            baseline.runIfDue().orElseThrow().baselined()));
                    withHistory.add(random.nextInt(withHistory.size() + 1), () -> history.baseline(() -> true));
                    run(withHistory);

                    assertThat(baseline.complete()).isTrue();
                    check(ops, history, live, db.getCollection(name + "_rebuilt", BsonDocument.class));
                });
    }

    /**
     * Per entity, its operations in seq order up to a random cut go to {@code before}, the rest to {@code after};
     * but one in seven of those before is held back (delivered for the first time with the history on) and one in
     * seven of those after came early (applied without it).
     */
    private static void split(List<Operation> ops, Random random, List<Operation> before, List<Operation> after) {
        Map<String, List<Operation>> byEntity = byEntity(ops);
        for (List<Operation> entity : byEntity.values()) {
            int cut = random.nextInt(entity.size() + 1);
            for (int i = 0; i < entity.size(); i++) {
                boolean early = i < cut ? random.nextInt(7) != 0 : random.nextInt(7) == 0;
                (early ? before : after).add(entity.get(i));
            }
        }
    }

    private static void check(List<Operation> ops, History history, MongoCollection<BsonDocument> live,
                              MongoCollection<BsonDocument> copy) {
        Map<String, EntityState> stored = EntityState.readAll(live.find(), Histories.SCHEMA);
        for (Map.Entry<String, List<Operation>> entity : byEntity(ops).entrySet()) {
            String id = entity.getKey();
            long horizon = history.versions(id).horizon();
            List<Operation> upTo = new ArrayList<>();
            for (Operation op : entity.getValue()) {
                upTo.add(op);
                EntityState expected = ORACLE.replay(upTo).get(id);
                Read<EntityState> read = history.asOf(id, op.seq());
                if (read instanceof Read.Known<EntityState> known) {
                    assertThat(known.answer()).as("Known as of seq %d of %s: %s", op.seq(), id, ops).isEqualTo(expected);
                    KNOWN.increment();
                } else {
                    assertThat(op.seq()).as("Unknowable as of seq %d of %s (%s) at or above its horizon %d: %s", op.seq(),
                            id, read, horizon, ops).isLessThan(horizon);
                    UNKNOWABLE.increment();
                }
            }
            long last = upTo.get(upTo.size() - 1).seq();
            assertThat(history.asOf(id, last).value()).as("the last state of %s is its live document", id)
                    .contains(stored.get(id));
        }
        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, Histories.SCHEMA));
        if (rebuild.complete()) {
            assertThat(EntityState.readAll(copy.find(), Histories.SCHEMA)).as("a complete rebuild is exact: %s", rebuild)
                    .isEqualTo(stored);
            REBUILT_EXACT.increment();
        } else {
            assertThat(rebuild.unrestored()).as("an incomplete rebuild says which entities it left out: %s", rebuild)
                    .isPositive();
        }
    }

    private static Map<String, List<Operation>> byEntity(List<Operation> ops) {
        Map<String, List<Operation>> byEntity = new TreeMap<>();
        ops.forEach(op -> byEntity.computeIfAbsent(op.entity(), e -> new ArrayList<>()).add(op));
        return byEntity;
    }

    private static List<List<Operation>> batches(List<Operation> delivered, Random random) {
        List<List<Operation>> batches = new ArrayList<>();
        for (int from = 0; from < delivered.size(); ) {
            int to = Math.min(delivered.size(), from + 1 + random.nextInt(12));
            batches.add(delivered.subList(from, to));
            from = to;
        }
        return batches;
    }

    private static void run(List<Runnable> tasks) throws Exception {
        Workers.drain(8, new ConcurrentLinkedQueue<>(tasks), Runnable::run);
    }

    /** Applies a batch; an op that failed is applied again on its own, as a consumer would. */
    private static void applyAll(Function<List<Operation>, List<BatchResult>> apply, List<Operation> batch) {
        for (BatchResult result : apply.apply(batch)) {
            if (result instanceof BatchResult.Failed failed) {
                assertThat(failed.error()).isInstanceOf(TransientException.class);
                for (int attempt = 1; ; attempt++) {
                    RETRIES.increment();
                    if (apply.apply(List.of(result.op())).get(0) instanceof BatchResult.Done) {
                        break;
                    }
                    assertThat(attempt).as("attempts at %s", result.op()).isLessThan(5);
                }
            } else {
                assertThat(result).isInstanceOf(BatchResult.Done.class);
            }
        }
    }
}
