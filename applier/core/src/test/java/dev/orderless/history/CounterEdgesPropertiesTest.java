package dev.orderless.history;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.CounterValues;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.PropertyCheck;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Counters at the ends of a long (issue 50), as a property: a history of increments whose deltas sit at and near
 * {@code Long.MIN_VALUE} and {@code Long.MAX_VALUE}, with deletes, delivered in three shuffled orders with
 * duplicates (one of them in batches), compacted between its two phases (after every operation of the first
 * phase, as the grace period promises) and again at the end, some operations of the first phase arriving only
 * after the compaction, past the grace. In every order: the same operations refused, and only some of those that
 * came past the grace (counting those whose effect a later delete would remove anyway: a late operation below a
 * delete is refused where it comes first and superseded where the delete does), the same stored counter (value and
 * BSON type: a long while the exact sum fits one, a Decimal128 past it), equal to the exact sum the reference model
 * gives without the refused operations; and the history, as of every seq, either gives the exact reference state or
 * says it cannot tell. Some histories hold more increments than the pending
 * array keeps, so that they are coalesced into runs on the way.
 */
@ExtendWith(MongoExtension.class)
class CounterEdgesPropertiesTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("cents").build();
    private static final ReferenceModel ORACLE = new ReferenceModel(SCHEMA);
    private static final Duration GRACE = Duration.ofHours(1);
    private static final long MAX = Long.MAX_VALUE;
    private static final long MIN = Long.MIN_VALUE;
    private static final long[] DELTAS = {MAX, MIN, MAX - 1, MIN + 1, -MAX, MAX / 2 + 1, -(MAX / 2) - 1, 1, -1, 0, 7,
            -20, 1L << 62, -(1L << 62)};
    private static final AtomicLong ENTITIES = new AtomicLong();
    private static final LongAdder PAST_A_LONG = new LongAdder();
    private static final LongAdder COALESCED = new LongAdder();
    private static final LongAdder REFUSED = new LongAdder();
    private static final LongAdder KNOWN = new LongAdder();
    private static final LongAdder UNKNOWABLE = new LongAdder();

    @AfterAll
    static void printCounts() {
        System.out.printf("[counters] %d stored counters past a long (Decimal128), %d with runs of increments midway,"
                + " %d refused operations, history: %d reads known and exact, %d unknowable%n", PAST_A_LONG.sum(),
                COALESCED.sum(), REFUSED.sum(), KNOWN.sum(), UNKNOWABLE.sum());
        assertThat(PAST_A_LONG.sum()).as("some sums leave a long").isPositive();
        assertThat(REFUSED.sum()).as("some late operations are past the compaction's horizon").isPositive();
        assertThat(COALESCED.sum()).as("some counters coalesced into runs").isPositive();
    }

    /** One history: its operations in seq order, the last seq of its first phase, and those held back past it. */
    record Drawn(List<Operation> ops, long phaseEnd, Set<Long> late) {
    }

    @Test
    void every_order_stores_the_exact_sum_and_refuses_the_same_operations_and_the_history_agrees(MongoDatabase db) {
        ManualClock clock = new ManualClock();
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        MongoCollection<BsonDocument> live = db.getCollection("accounts", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(live, SCHEMA, options);
        TombstoneCompactor compactor = TombstoneCompactor.create(live, SCHEMA, GRACE, options);
        History history = HistoryTest.fromTheStart(db.getCollection("accounts_history", BsonDocument.class), live,
                SCHEMA, HistoryOptions.ofDefaults());
        RecordingApplier recording = history.recording(applier);

        PropertyCheck.forAll("counters at a long's ends: 3 orders, duplicates, deletes, compaction", 20,
                CounterEdgesPropertiesTest::draw).check((drawnList, trySeed) -> {
            Drawn drawn = drawnList.get(0);
            Random random = new Random(trySeed);
            List<Set<Long>> refusals = new ArrayList<>();
            List<BsonValue> counters = new ArrayList<>();
            for (int order = 0; order < 3; order++) {
                String entity = "a" + ENTITIES.incrementAndGet();
                List<Operation> ops = renamed(drawn.ops(), entity);
                Set<Long> refused = new TreeSet<>();
                deliver(recording, phase(ops, op -> op.seq() <= drawn.phaseEnd() && !drawn.late().contains(op.seq()),
                        random), order == 1, random, refused);
                BsonDocument midway = live.find(eq("_id", entity)).first();
                COALESCED.add(midway != null && midway.containsKey("_incRuns") ? 1 : 0);
                clock.advance(GRACE.plusMinutes(1));   // the first phase is now older than the grace: nothing of it comes
                compactor.compact(entity);
                deliver(recording, phase(ops, op -> op.seq() > drawn.phaseEnd() || drawn.late().contains(op.seq()),
                        random), order == 1, random, refused);
                clock.advance(GRACE.plusMinutes(1));
                compactor.compact(entity);

                BsonDocument stored = live.find(eq("_id", entity)).first();
                List<Operation> counted = ops.stream().filter(op -> !refused.contains(op.seq())).toList();
                EntityState expected = ORACLE.replay(counted).getOrDefault(entity, History.empty(entity));
                assertThat(EntityState.of(stored, SCHEMA)).as("order %d: the exact reference state; %s; phase end %d, late %s; refused %s; stored %s", order, drawn.ops(), drawn.phaseEnd(), drawn.late(), refused, stored.toJson())
                        .isEqualTo(expected);
                BigInteger sum = expected.counters().get("cents");
                assertThat(stored.get("cents")).as("order %d: stored as the rule says", order)
                        .isEqualTo(sum == null ? null : CounterValues.stored(sum));
                assertThat(refused).as("order %d: only operations past the grace are refused", order)
                        .isSubsetOf(drawn.late());
                // those with an effect: above the last delete, which every order ends with
                refusals.add(new TreeSet<>(refused.stream().filter(seq -> seq > expected.floor()).toList()));
                counters.add(stored.get("cents"));
                PAST_A_LONG.add(stored.get("cents") != null && stored.get("cents").isDecimal128() ? 1 : 0);
                REFUSED.add(refused.size());
                checkHistory(history, entity, ops);
            }
            assertThat(refusals).as("the same operations refused in every order").containsOnly(refusals.get(0));
            assertThat(counters).as("the same stored counter, value and type, in every order").containsOnly(counters.get(0));
        });
    }

    /**
     * The same histories with the history turned on halfway, over what the first phase left (counters coalesced into
     * runs among them, with the held-back seqs as gaps), the way history.md says (withLive, the start decided, the
     * baseline pass), then the rest recorded: as of every seq the history answers the exact reference state of the
     * operations up to it, or that it cannot tell (below the baseline's horizon); never Known and wrong (issue 50's
     * review: a late increment in a gap between runs was answered Known without it).
     */
    @Test
    void a_history_turned_on_over_counters_kept_in_runs_answers_exactly_or_not_at_all(MongoDatabase db) {
        AtomicLong collections = new AtomicLong();
        PropertyCheck.forAll("history turned on over counters at a long's ends, with runs and gaps", 12,
                CounterEdgesPropertiesTest::draw).check((drawnList, trySeed) -> {
            Drawn drawn = drawnList.get(0);
            Random random = new Random(trySeed);
            String name = "brownfield" + collections.incrementAndGet();
            MongoCollection<BsonDocument> live = db.getCollection(name, BsonDocument.class);
            GuardedApplier applier = GuardedApplier.create(live, SCHEMA);
            List<Operation> ops = renamed(drawn.ops(), "b");
            phase(ops, op -> op.seq() <= drawn.phaseEnd() && !drawn.late().contains(op.seq()), random)
                    .forEach(applier::apply);
            History history = History.of(db.getCollection(name + "_history", BsonDocument.class), SCHEMA)
                    .withLive(live);
            history.beginBaseline(HistoryBaseline.Start.DETECT);
            history.baseline(() -> true);
            RecordingApplier recording = history.recording(applier);
            phase(ops, op -> op.seq() > drawn.phaseEnd() || drawn.late().contains(op.seq()), random)
                    .forEach(recording::apply);

            checkHistory(history, "b", ops);
            history.asOf("b", ops.get(ops.size() - 1).seq()).value().ifPresent(latest -> assertThat(latest)
                    .as("the latest state, where Known").isEqualTo(EntityState.of(live.find(eq("_id", "b")).first(),
                            SCHEMA)));
        });
    }

    /**
     * As of every seq (of a long history, forty of them), the history gives the reference state of the operations up
     * to it, exactly, or says it cannot tell (below the live document's compaction, where it refused what came too
     * late).
     */
    private static void checkHistory(History history, String entity, List<Operation> ops) {
        List<Operation> upTo = new ArrayList<>();
        int every = Math.max(1, ops.size() / 40);
        for (Operation op : ops) {
            upTo.add(op);
            if (op.seq() % every != 0 && op != ops.get(ops.size() - 1)) {
                continue;
            }
            Read<EntityState> read = history.asOf(entity, op.seq());
            if (read instanceof Read.Known<EntityState> known) {
                assertThat(known.answer()).as("as of seq %d", op.seq())
                        .isEqualTo(ORACLE.replay(upTo).getOrDefault(entity, History.empty(entity)));
                KNOWN.increment();
            } else {
                UNKNOWABLE.increment();
            }
        }
    }

    /**
     * 8 to 40 operations (one history in eight: 280 to 380, past the pending increments a counter keeps), seqs
     * consecutive from 1 as a stamper per entity gives them: increments with deltas at a long's edges, one delete in
     * ten. The first phase ends at a third to two thirds; up to three of its operations are held back past the
     * compaction.
     */
    private static List<Drawn> draw(Random random) {
        int n = random.nextInt(8) == 0 ? 280 + random.nextInt(101) : 8 + random.nextInt(33);
        List<Operation> ops = new ArrayList<>();
        for (long seq = 1; seq <= n; seq++) {
            ops.add(random.nextInt(10) == 0 ? Operation.delete("t", seq)
                    : Operation.increment("t", seq, "cents", DELTAS[random.nextInt(DELTAS.length)]));
        }
        long phaseEnd = n / 3 + random.nextInt(Math.max(1, n / 3));
        Set<Long> late = new TreeSet<>();
        for (int i = random.nextInt(4); i > 0; i--) {
            late.add(1 + (long) random.nextInt((int) phaseEnd));
        }
        return List.of(new Drawn(ops, phaseEnd, late));
    }

    /** The operations {@code which} takes, each once and a fifth of them again, shuffled. */
    private static List<Operation> phase(List<Operation> ops, java.util.function.Predicate<Operation> which,
                                         Random random) {
        List<Operation> delivered = new ArrayList<>();
        for (Operation op : ops) {
            if (which.test(op)) {
                delivered.add(op);
                if (random.nextInt(5) == 0) {
                    delivered.add(op);
                }
            }
        }
        Collections.shuffle(delivered, random);
        return delivered;
    }

    /**
     * Applies {@code delivered} one by one or in batches, adding the seq of each refused operation to {@code refused}.
     */
    private static void deliver(RecordingApplier recording, List<Operation> delivered, boolean batches, Random random,
                                Set<Long> refused) {
        if (!batches) {
            delivered.forEach(op -> note(op, recording.apply(op), refused));
            return;
        }
        for (int from = 0; from < delivered.size(); ) {
            int to = Math.min(delivered.size(), from + 1 + random.nextInt(30));
            for (BatchResult result : recording.applyAll(delivered.subList(from, to))) {
                assertThat(result).as("%s", result).isInstanceOf(BatchResult.Done.class);
                note(result.op(), ((BatchResult.Done) result).outcome(), refused);
            }
            from = to;
        }
    }

    private static void note(Operation op, Outcome outcome, Set<Long> refused) {
        if (outcome == Outcome.BEYOND_HORIZON) {
            refused.add(op.seq());
        }
    }

    private static List<Operation> renamed(List<Operation> ops, String entity) {
        return ops.stream().map(op -> op instanceof Operation.Increment i
                ? (Operation) Operation.increment(entity, i.seq(), i.field(), i.delta())
                : Operation.delete(entity, op.seq())).toList();
    }
}
