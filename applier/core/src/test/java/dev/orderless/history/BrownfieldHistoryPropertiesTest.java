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
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.PropertyCheck;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
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
 * documented step ({@link History#beginBaseline}, then the leased {@link HistoryBaseline} beside the consumers),
 * while eight threads record and apply the rest, with redeliveries of the old ones and duplicates.
 *
 * <p>During the baseline: its first pass loses its lease after a random number of entities, so reads meet it under
 * way; readers among the consumers ask {@code asOf} at random seqs, and each {@code Known} answer must be the
 * oracle's state of some set of the entity's operations that holds every one applied before the read began and
 * none not yet delivered when it ended; once the first half of the deliveries is done (the baseline still under way,
 * or not), every {@code asOf} of every entity at every seq is {@code Unknowable} or the oracle's state of what was
 * delivered. Then the rest is delivered beside a second leased pass, which completes the baseline, and a plain
 * pass of {@link History#baseline}; then every {@code asOf} is {@code Unknowable} or the sequential oracle's state
 * (never {@code Known} and wrong), is {@code Known} from the entity's horizon on, and equals the live document at
 * its last seq; a rebuild into a new collection is exact or says it is incomplete.
 *
 * <p>Without that step, over the same kind of data (issue 50: {@code History.of} alone answered reads Known and wrong,
 * and a rebuild said complete with entities wrong): a history that does not know its live collection, and one that
 * does but whose start was never decided, answer every read Unknowable naming the call to make, and leave every
 * entity out of a rebuild.
 */
@ExtendWith(MongoExtension.class)
class BrownfieldHistoryPropertiesTest {
    private static final ReferenceModel ORACLE = new ReferenceModel(Histories.ALL_TYPES);
    private static final int SUBSETS_UP_TO = 10;   // in-flight operations a concurrent read is checked against
    private static final AtomicLong TRIES = new AtomicLong();
    private static final LongAdder KNOWN = new LongAdder();
    private static final LongAdder UNKNOWABLE = new LongAdder();
    private static final LongAdder DURING_KNOWN = new LongAdder();
    private static final LongAdder DURING_UNKNOWABLE = new LongAdder();
    private static final LongAdder UNDER_WAY = new LongAdder();
    private static final LongAdder BASELINED = new LongAdder();
    private static final LongAdder REBUILT_EXACT = new LongAdder();
    private static final LongAdder RETRIES = new LongAdder();
    private static final LongAdder OFF_THE_SAFE_PATH = new LongAdder();

    @AfterAll
    static void printCounts() {
        System.out.println("[brownfield history] during the baseline: " + DURING_KNOWN.sum() + " reads Known (each the"
                + " oracle's), " + DURING_UNKNOWABLE.sum() + " Unknowable, in " + UNDER_WAY.sum() + " tries still under way"
                + " half-way; after it: " + KNOWN.sum() + " Known (each the oracle's), " + UNKNOWABLE.sum() + " Unknowable"
                + " (below a baseline horizon), " + BASELINED.sum() + " entities taken by a baseline, " + REBUILT_EXACT.sum()
                + " rebuilds exact, " + RETRIES.sum() + " ops applied again after a transient error; without the"
                + " baseline step: " + OFF_THE_SAFE_PATH.sum() + " reads Unknowable naming the call to make");
    }

    /** The operations delivered so far: started (given to a consumer) and finished (its apply returned). */
    private static final class Deliveries {
        final Set<Operation> started = ConcurrentHashMap.newKeySet();
        final Set<Operation> finished = ConcurrentHashMap.newKeySet();

        Runnable batch(Function<List<Operation>, List<BatchResult>> apply, List<Operation> batch) {
            return () -> {
                started.addAll(batch);
                applyAll(apply, batch);
                finished.addAll(batch);
            };
        }
    }

    @Test
    void turned_on_with_the_baseline_while_consumers_run_every_read_is_unknowable_or_the_oracles_and_a_rebuild_exact(
            MongoDatabase db) {
        PropertyCheck.forAll("brownfield: 12..40 ops over 4 entities, part applied without the history, the rest"
                        + " recorded with 30% redeliveries of the old and 20% duplicates beside a baseline that stops"
                        + " half-way and readers, batches of 1..12, 8 threads", 12,
                        random -> Histories.stepsOfAllTypes(random, 12, 40, 4))
                .check((steps, trySeed) -> {
                    String name = "b" + TRIES.incrementAndGet();
                    ManualClock clock = new ManualClock();
                    MongoCollection<BsonDocument> live = db.getCollection(name, BsonDocument.class);
                    GuardedApplier applier = GuardedApplier.create(live, Histories.ALL_TYPES);
                    History history = History.of(db.getCollection(name + "_history", BsonDocument.class),
                            Histories.ALL_TYPES, HistoryOptions.ofDefaults().withClock(clock)).withLive(live);
                    RecordingApplier recording = history.recording(applier);
                    List<Operation> ops = Histories.operations(steps, name + "-");
                    Random random = new Random(trySeed);
                    Consumed consumed = consumedWithoutTheHistory(ops, random, applier);

                    Deliveries delivered = new Deliveries();
                    delivered.started.addAll(consumed.before());
                    delivered.finished.addAll(consumed.before());
                    List<List<Operation>> batches = batches(Histories.delivery(consumed.rest(), 0.2, random), random);
                    int half = random.nextInt(batches.size() + 1);

                    // the documented step: decided before the consumers, then the leased passes beside them
                    assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT))
                            .isNotEqualTo(HistoryBaseline.Begun.UNDECIDED);
                    MongoLeaseProvider leases = MongoLeaseProvider.create(db.getCollection(name + "_leases",
                            BsonDocument.class), LeaseOptions.ofDefaults().withClock(clock));
                    HistoryBaseline stopping = HistoryBaseline.create(history, BaselineTest.losingAfter(leases,
                            random.nextInt(5)), "a" + name, Duration.ofMinutes(1));
                    HistoryBaseline resuming = HistoryBaseline.create(history, leases, "b" + name, Duration.ofMinutes(1));

                    List<Runnable> firstHalf = new ArrayList<>();
                    batches.subList(0, half).forEach(batch -> firstHalf.add(delivered.batch(recording::applyAll, batch)));
                    firstHalf.add(random.nextInt(Math.min(3, firstHalf.size() + 1)), () -> stopping.runIfDue()
                            .ifPresent(pass -> BASELINED.add(pass.baselined())));
                    Map<String, List<Operation>> byEntity = byEntity(ops);
                    List<String> entities = new ArrayList<>(byEntity.keySet());
                    for (int reader = 0; reader < 4; reader++) {
                        String entity = entities.get(random.nextInt(entities.size()));
                        List<Operation> its = byEntity.get(entity);
                        long seq = its.get(random.nextInt(its.size())).seq();
                        firstHalf.add(random.nextInt(firstHalf.size() + 1), () -> readDuring(history, entity, seq,
                                delivered));
                    }
                    run(firstHalf);
                    if (!history.baselineComplete()) {
                        UNDER_WAY.increment();
                    }
                    checkDelivered(byEntity, delivered.finished, history);

                    clock.advance(Duration.ofMinutes(2));   // the interval since the pass that stopped
                    List<Runnable> secondHalf = new ArrayList<>();
                    batches.subList(half, batches.size()).forEach(batch ->
                            secondHalf.add(delivered.batch(recording::applyAll, batch)));
                    secondHalf.add(random.nextInt(Math.min(3, secondHalf.size() + 1)), () -> resuming.runIfDue()
                            .ifPresent(pass -> BASELINED.add(pass.baselined())));
                    secondHalf.add(random.nextInt(secondHalf.size() + 1), () -> history.baseline(() -> true));
                    run(secondHalf);

                    assertThat(history.baselineComplete()).isTrue();
                    check(ops, history, live, db.getCollection(name + "_rebuilt", BsonDocument.class));
                });
    }

    @Test
    void turned_on_without_the_baseline_step_every_read_is_unknowable_naming_the_call_and_every_rebuild_incomplete(
            MongoDatabase db) {
        PropertyCheck.forAll("brownfield without the baseline step: 12..40 ops over 4 entities, part applied without the"
                        + " history, the rest recorded with 30% redeliveries of the old and 20% duplicates, batches of"
                        + " 1..12, 8 threads", 12, random -> Histories.stepsOfAllTypes(random, 12, 40, 4))
                .check((steps, trySeed) -> {
                    String name = "n" + TRIES.incrementAndGet();
                    MongoCollection<BsonDocument> live = db.getCollection(name, BsonDocument.class);
                    GuardedApplier applier = GuardedApplier.create(live, Histories.ALL_TYPES);
                    MongoCollection<BsonDocument> records = db.getCollection(name + "_history", BsonDocument.class);
                    History recordsAlone = History.of(records, Histories.ALL_TYPES);
                    History undecided = History.of(records, Histories.ALL_TYPES).withLive(live);
                    List<Operation> ops = Histories.operations(steps, name + "-");
                    Random random = new Random(trySeed);
                    Consumed consumed = consumedWithoutTheHistory(ops, random, applier);
                    RecordingApplier recording = recordsAlone.recording(applier);
                    List<Runnable> deliveries = new ArrayList<>();
                    batches(Histories.delivery(consumed.rest(), 0.2, random), random).forEach(batch ->
                            deliveries.add(() -> applyAll(recording::applyAll, batch)));
                    run(deliveries);

                    offTheSafePath(recordsAlone, ops, "History.of(...).withLive(collection)",
                            db.getCollection(name + "_rebuilt_alone", BsonDocument.class));
                    offTheSafePath(undecided, ops, "History.beginBaseline(Start.DETECT)",
                            db.getCollection(name + "_rebuilt_undecided", BsonDocument.class));
                });
    }

    /**
     * Every read of every entity of {@code ops} that {@code history} recorded is Unknowable naming {@code call}, at every
     * seq, and a rebuild leaves every one out, writing nothing.
     */
    private static void offTheSafePath(History history, List<Operation> ops, String call,
                                       MongoCollection<BsonDocument> copy) {
        Set<String> recorded = new java.util.TreeSet<>();
        history.forEachRecorded(op -> recorded.add(op.entity()));
        for (Map.Entry<String, List<Operation>> entity : byEntity(ops).entrySet()) {
            String id = entity.getKey();
            for (Operation op : entity.getValue()) {
                assertThat(history.asOf(id, op.seq())).as("as of seq %d of %s", op.seq(), id)
                        .isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason()).contains(call));
                assertThat(history.changes(id, 0, op.seq())).isInstanceOfSatisfying(Read.Unknowable.class,
                        r -> assertThat(r.reason()).contains(call));
                OFF_THE_SAFE_PATH.increment();
            }
            if (recorded.contains(id)) {
                assertThat(history.versions(id).unknowable()).as("the versions of %s", id)
                        .hasValueSatisfying(reason -> assertThat(reason).contains(call));
            }
        }
        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, Histories.ALL_TYPES));
        assertThat(rebuild.complete()).as("%s", rebuild).isFalse();
        assertThat(rebuild.unrestored()).as("%s", rebuild).isEqualTo(recorded.size());
        assertThat(rebuild.reasons()).allSatisfy(reason -> assertThat(reason).contains(call));
        assertThat(copy.countDocuments()).as("nothing written").isZero();
    }

    /**
     * A read while consumers and the baseline run: Unknowable, or the oracle's state of the entity's operations up to
     * {@code seq} that were applied before it began, with some of those in flight while it ran (none not yet given
     * to a consumer when it ended).
     */
    private static void readDuring(History history, String entity, long seq, Deliveries delivered) {
        Set<Operation> applied = Set.copyOf(delivered.finished);
        Read<EntityState> read = history.asOf(entity, seq);
        Set<Operation> given = Set.copyOf(delivered.started);
        if (!(read instanceof Read.Known<EntityState> known)) {
            DURING_UNKNOWABLE.increment();
            return;
        }
        List<Operation> sure = applied.stream().filter(op -> op.entity().equals(entity) && op.seq() <= seq).toList();
        List<Operation> maybe = given.stream().filter(op -> op.entity().equals(entity) && op.seq() <= seq
                && !applied.contains(op)).toList();
        if (maybe.size() > SUBSETS_UP_TO) {
            return;   // too many in flight to try every set
        }
        boolean explained = false;
        for (int subset = 0; subset < 1 << maybe.size() && !explained; subset++) {
            List<Operation> some = new ArrayList<>(sure);
            for (int i = 0; i < maybe.size(); i++) {
                if ((subset & 1 << i) != 0) {
                    some.add(maybe.get(i));
                }
            }
            explained = ORACLE.replay(some).getOrDefault(entity, History.empty(entity)).equals(known.answer());
        }
        assertThat(explained).as("Known as of seq %d of %s during the baseline: %s; applied before the read %s, in"
                + " flight %s", seq, entity, known.answer(), sure, maybe).isTrue();
        DURING_KNOWN.increment();
    }

    /** With nothing in flight: every read of every entity is Unknowable or the oracle's state of what was delivered. */
    private static void checkDelivered(Map<String, List<Operation>> byEntity, Set<Operation> delivered, History history) {
        for (Map.Entry<String, List<Operation>> entity : byEntity.entrySet()) {
            String id = entity.getKey();
            for (Operation op : entity.getValue()) {
                List<Operation> upTo = delivered.stream().filter(d -> d.entity().equals(id) && d.seq() <= op.seq())
                        .toList();
                Read<EntityState> read = history.asOf(id, op.seq());
                if (read instanceof Read.Known<EntityState> known) {
                    assertThat(known.answer()).as("Known as of seq %d of %s half-way (baseline complete: %s), delivered"
                                    + " %s", op.seq(), id, history.baselineComplete(), upTo)
                            .isEqualTo(ORACLE.replay(upTo).getOrDefault(id, History.empty(id)));
                    DURING_KNOWN.increment();
                } else {
                    DURING_UNKNOWABLE.increment();
                }
            }
        }
    }

    /** What was consumed before the history was on, and what its consumers deliver once it is on. */
    private record Consumed(List<Operation> before, List<Operation> rest) {
    }

    /**
     * Applies part of {@code ops} without the history ({@link #split}), in batches with duplicates from eight threads;
     * the rest, with redeliveries of about 3 in 10 of that part, is what the consumers deliver once the history is on.
     */
    private static Consumed consumedWithoutTheHistory(List<Operation> ops, Random random, GuardedApplier applier)
            throws Exception {
        List<Operation> before = new ArrayList<>();
        List<Operation> after = new ArrayList<>();
        split(ops, random, before, after);
        List<Runnable> withoutHistory = new ArrayList<>();
        batches(Histories.delivery(before, 0.2, random), random).forEach(batch ->
                withoutHistory.add(() -> applyAll(applier::applyAll, batch)));
        run(withoutHistory);
        List<Operation> rest = new ArrayList<>(after);
        before.stream().filter(op -> random.nextDouble() < 0.3).forEach(rest::add);   // redeliveries
        return new Consumed(before, rest);
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
        Map<String, EntityState> stored = EntityState.readAll(live.find(), Histories.ALL_TYPES);
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
        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, Histories.ALL_TYPES));
        if (rebuild.complete()) {
            assertThat(EntityState.readAll(copy.find(), Histories.ALL_TYPES)).as("a complete rebuild is exact: %s", rebuild)
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
