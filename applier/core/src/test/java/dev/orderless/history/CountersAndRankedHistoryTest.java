package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Counters and ranked registers in the version history (issue 39): the state as of any seq is exact, retention
 * folds them, the baseline takes them from a live document without counting anything twice, and a rebuild writes
 * them back or says what it cannot tell; and where they meet what the live document holds beyond the records
 * (from an adversarial review): values written before orderless, sums folded by the live compaction, assignments
 * applied without recording. Each read is Unknowable or the live document's state.
 */
@ExtendWith(MongoExtension.class)
class CountersAndRankedHistoryTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("credits")
            .ranked("status", "APPLIED", "ENROLLED", "GRADUATED", "WITHDRAWN").register("name").register("city")
            .build();
    private static final ReferenceModel ORACLE = new ReferenceModel(SCHEMA);
    private static final Duration GRACE = Duration.ofHours(1);

    private final ManualClock clock = new ManualClock();
    private MongoDatabase db;
    private MongoCollection<BsonDocument> live;
    private GuardedApplier applier;
    private TombstoneCompactor compactor;
    private History history;
    private RecordingApplier recording;

    @BeforeEach
    void setUp(MongoDatabase db) {
        this.db = db;
        live = db.getCollection("students", BsonDocument.class);
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        applier = GuardedApplier.create(live, SCHEMA, options);
        compactor = TombstoneCompactor.create(live, SCHEMA, GRACE, options);
        history = History.of(db.getCollection("students_history", BsonDocument.class), SCHEMA,
                HistoryOptions.ofDefaults().withClock(clock)).withLive(live);
        recording = history.recording(applier);
    }

    private static Operation credits(long seq, long delta) {
        return Operation.increment("s1", seq, "credits", delta);
    }

    private static Operation status(long seq, String value) {
        return Operation.assign("s1", seq, "status", new BsonString(value));
    }

    private EntityState liveState() {
        return EntityState.of(live.find(Filters.eq("_id", "s1")).first(), SCHEMA);
    }

    private EntityState asOf(long seq) {
        return history.asOf("s1", seq).value().orElseThrow(() -> new AssertionError(history.asOf("s1", seq)));
    }

    private static EntityState oracle(List<Operation> ops, long upTo) {
        return ORACLE.replay(ops.stream().filter(op -> op.seq() <= upTo).toList()).get("s1");
    }

    @Test
    void as_of_every_seq_a_counter_is_the_sum_and_a_ranked_register_the_highest_ranked_up_to_it_in_any_order() {
        List<Operation> ops = List.of(status(1, "APPLIED"), credits(2, 5), status(3, "WITHDRAWN"), credits(4, -2),
                Operation.delete("s1", 5), status(6, "ENROLLED"), credits(7, 4), status(8, "APPLIED"));
        assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT)).isEqualTo(HistoryBaseline.Begun.COMPLETE);
        List.of(7, 4, 1, 6, 0, 3, 2, 5, 1).forEach(i -> recording.apply(ops.get(i)));   // the last a redelivery

        for (Operation op : ops) {
            assertThat(asOf(op.seq())).as("as of seq %d", op.seq()).isEqualTo(oracle(ops, op.seq()));
        }
        assertThat(asOf(4).counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(3L)));
        assertThat(asOf(4).registers().get("status").value()).isEqualTo(new BsonString("WITHDRAWN"));
        assertThat(asOf(8)).as("the last is the live document").isEqualTo(liveState());
    }

    @Test
    void retention_folds_counters_and_ranked_registers_and_the_reads_and_a_rebuild_after_it_stay_exact() {
        history.beginBaseline(HistoryBaseline.Start.DETECT);   // on since the collection was empty
        List<Operation> ops = new ArrayList<>(List.of(credits(1, 5), status(2, "GRADUATED"), credits(3, 2),
                status(4, "ENROLLED"), credits(5, 1)));
        ops.forEach(recording::apply);
        clock.advance(Duration.ofDays(2));
        compactor.compactAll();   // the live document folds the increments up to seq 5
        List<Operation> later = List.of(Operation.delete("s1", 6), credits(7, 10), status(8, "APPLIED"));
        ops.addAll(later);
        assertThat(history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true).folded()).isEqualTo(5);

        later.forEach(recording::apply);

        assertThat(asOf(5)).isEqualTo(oracle(ops, 5));
        assertThat(asOf(8)).isEqualTo(oracle(ops, 8)).isEqualTo(liveState());
        MongoCollection<BsonDocument> copy = db.getCollection("rebuilt", BsonDocument.class);
        assertThat(history.rebuild(GuardedApplier.create(copy, SCHEMA)).complete()).isTrue();
        assertThat(EntityState.of(copy.find().first(), SCHEMA)).isEqualTo(liveState());
    }

    @Test
    void a_rebuild_after_retention_writes_a_folded_sum_as_one_increment_and_skips_a_redelivery_the_live_one_refused() {
        history.beginBaseline(HistoryBaseline.Start.DETECT);   // on since the collection was empty
        List<Operation> ops = List.of(credits(1, 5), credits(2, 2), credits(3, 1), status(4, "ENROLLED"));
        ops.forEach(recording::apply);
        clock.advance(Duration.ofDays(2));
        compactor.compactAll();
        history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);

        assertThat(recording.apply(credits(2, 2))).as("recorded again (its record was folded), refused by the live one")
                .isEqualTo(Outcome.BEYOND_HORIZON);

        MongoCollection<BsonDocument> copy = db.getCollection("rebuilt", BsonDocument.class);
        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, SCHEMA));
        assertThat(rebuild.complete()).as("%s", rebuild).isTrue();
        assertThat(EntityState.of(copy.find().first(), SCHEMA)).isEqualTo(liveState());
        assertThat(liveState().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(8L)));
    }

    @Test
    void the_baseline_takes_a_counter_so_that_an_increment_applied_before_it_and_delivered_again_counts_once() {
        List<Operation> before = List.of(credits(1, 5), credits(2, 2), status(3, "ENROLLED"));
        before.forEach(applier::apply);   // consumed without the history
        assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT)).isEqualTo(HistoryBaseline.Begun.UNDER_WAY);
        history.baseline(() -> true);

        recording.apply(credits(2, 2));   // a redelivery of one applied before: recorded, a duplicate to the live one
        recording.apply(credits(4, 10));

        List<Operation> all = new ArrayList<>(before);
        all.add(credits(4, 10));
        assertThat(asOf(4)).isEqualTo(oracle(all, 4)).isEqualTo(liveState());
        assertThat(asOf(4).counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(17L)));
    }

    @Test
    void after_the_baseline_a_delete_delivered_late_brings_back_the_ranked_assignment_above_it() {
        List<Operation> before = List.of(status(1, "WITHDRAWN"), status(4, "ENROLLED"), credits(5, 3), credits(2, 7));
        before.forEach(applier::apply);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);
        assertThat(asOf(5).registers().get("status").value()).isEqualTo(new BsonString("WITHDRAWN"));

        recording.apply(Operation.delete("s1", 3));   // stamped between them

        List<Operation> all = new ArrayList<>(before);
        all.add(Operation.delete("s1", 3));
        EntityState expected = oracle(all, 5);
        assertThat(expected.registers().get("status").value()).isEqualTo(new BsonString("ENROLLED"));
        assertThat(expected.counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(3L)));
        assertThat(asOf(5)).isEqualTo(expected).isEqualTo(liveState());
    }

    @Test
    void after_the_baseline_an_increment_at_or_below_what_the_live_document_folded_is_kept_apart_not_counted() {
        List<Operation> before = List.of(credits(1, 5), credits(2, 2), credits(3, 1));
        before.forEach(applier::apply);
        clock.advance(Duration.ofDays(1));
        compactor.compactAll();   // folds 1..3 into the value
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);

        assertThat(recording.apply(credits(2, 2))).isEqualTo(Outcome.BEYOND_HORIZON);

        assertThat(asOf(3).counters()).as("not counted twice").isEqualTo(Map.of("credits", BigInteger.valueOf(8L)));
        assertThat(history.versions("s1").late()).as("kept apart: the history cannot tell it")
                .containsExactly(credits(2, 2));
        MongoCollection<BsonDocument> copy = db.getCollection("rebuilt", BsonDocument.class);
        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, SCHEMA));
        assertThat(rebuild.complete()).as("the live document folded it too: counted there once, or refused").isTrue();
        assertThat(EntityState.of(copy.find().first(), SCHEMA)).isEqualTo(liveState());
    }

    @Test
    void an_increment_is_recorded_with_its_field_and_delta_and_read_back_as_the_same_operation() {
        recording.apply(credits(1, -4));

        BsonDocument record = history.collection().find(Filters.eq("_id.seq", 1L)).first();

        assertThat(record.getString("op").getValue()).isEqualTo("increment");
        assertThat(record.getInt64("delta").getValue()).isEqualTo(-4L);
        assertThat(Records.operationOf(record)).isEqualTo(credits(1, -4));
    }

    private static Operation city(long seq, String value) {
        return Operation.assign("s1", seq, "city", new BsonString(value));
    }


    private void retainOld() {
        clock.advance(Duration.ofDays(2));
        history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);
    }

    /**
     * Retention folds a counter up to the live _incFloor before the baseline takes the entity; the baseline's join
     * takes the live document's sum (which holds the increments applied before the history was on) over the
     * history's (recorded increments only), both folded up to the same seq.
     */
    @Test
    void a_join_at_the_same_fold_takes_the_live_sum_with_the_increments_from_before_the_history() {
        applier.apply(credits(1, 5));
        applier.apply(credits(2, 2));   // consumed before the history was on: 7
        assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT)).isEqualTo(HistoryBaseline.Begun.UNDER_WAY);
        recording.apply(credits(3, 1));   // recorded: live 8
        clock.advance(Duration.ofDays(2));
        compactor.compactAll();   // _incFloor 3, value 8
        history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);   // folds seq 3: sum 1 upTo 3
        history.baseline(() -> true);   // joins the live document in

        assertThat(liveState().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(8L)));
        Read<EntityState> read = history.asOf("s1", 3);
        assertThat(read).as("Unknowable, or the live document's 8").satisfiesAnyOf(
                r -> assertThat(r).isInstanceOf(Read.Unknowable.class),
                r -> assertThat(r.value().orElseThrow().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(8L))));
    }

    /**
     * The baseline's join keeps a plain register written before orderless (seq 0: no operation stands for it, so a
     * merge cannot replay it) when the entity already has a state retention folded.
     */
    @Test
    void a_join_keeps_a_register_written_before_orderless() {
        live.insertOne(new BsonDocument("_id", new BsonString("s1")).append("name", new BsonString("Ada")));
        applier.apply(city(1, "Oslo"));   // before the history: the document now shows a seq
        assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT)).isEqualTo(HistoryBaseline.Begun.UNDER_WAY);
        recording.apply(city(2, "Bergen"));
        retainOld();   // folds seq 2 before the baseline took s1
        history.baseline(() -> true);

        assertThat(liveState().registers().get("name").value()).isEqualTo(new BsonString("Ada"));
        Read<EntityState> read = history.asOf("s1", 2);
        assertThat(read).as("Unknowable, or the live document's state").satisfiesAnyOf(
                r -> assertThat(r).isInstanceOf(Read.Unknowable.class),
                r -> assertThat(r.value().orElseThrow()).isEqualTo(liveState()));
    }

    /** The same for a ranked register whose value written before orderless outranks a later assignment. */
    @Test
    void a_join_keeps_a_ranked_value_written_before_orderless_that_outranks_a_later_one() {
        live.insertOne(new BsonDocument("_id", new BsonString("s1")).append("status", new BsonString("GRADUATED")));
        applier.apply(city(1, "Oslo"));
        assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT)).isEqualTo(HistoryBaseline.Begun.UNDER_WAY);
        recording.apply(status(2, "APPLIED"));   // outranked by GRADUATED: live keeps GRADUATED
        retainOld();
        history.baseline(() -> true);

        assertThat(liveState().registers().get("status").value()).isEqualTo(new BsonString("GRADUATED"));
        Read<EntityState> read = history.asOf("s1", 2);
        assertThat(read).as("Unknowable, or the live document's state").satisfiesAnyOf(
                r -> assertThat(r).isInstanceOf(Read.Unknowable.class),
                r -> assertThat(r.value().orElseThrow()).isEqualTo(liveState()));
    }

    /**
     * A counter's fold vouches for its own _incFloor only: an assignment applied without recording (an older
     * consumer) at a seq below the fold is state no record accounts for.
     */
    @Test
    void a_counters_fold_vouches_for_no_unrecorded_assignment_below_it() {
        applier.apply(credits(5, 3));
        applier.apply(credits(10, 2));
        clock.advance(Duration.ofDays(1));
        compactor.compactAll();   // _incFloor 10
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);
        assertThat(history.asOf("s1", 10).value()).isPresent();

        applier.apply(city(7, "Oslo"));   // applied without recording, after the baseline read the document

        assertThat(liveState().registers()).containsKey("city");
        Read<EntityState> read = history.asOf("s1", 10);
        assertThat(read).as("the live document shows city@7, which no record accounts for: %s", read)
                .isInstanceOf(Read.Unknowable.class);
    }

    /**
     * History on from the start, retention folds the counter up to the live _incFloor, then a delete stamped below
     * the fold arrives late: the live applier refuses it (beyond the horizon) and asOf is Unknowable; the rebuild
     * writes the live document's state (the folded sum, without the delete) or leaves it out.
     */
    @Test
    void a_rebuild_leaves_out_a_late_delete_below_a_counters_fold_that_the_live_document_refused() {
        history.beginBaseline(HistoryBaseline.Start.DETECT);   // empty collection: complete
        recording.apply(status(1, "ENROLLED"));
        recording.apply(credits(2, 5));
        recording.apply(credits(4, 1));
        clock.advance(Duration.ofDays(2));
        compactor.compactAll();   // _incFloor 4
        history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);

        assertThat(recording.apply(Operation.delete("s1", 3))).isEqualTo(Outcome.BEYOND_HORIZON);

        MongoCollection<BsonDocument> copy = db.getCollection("rebuilt", BsonDocument.class);
        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, SCHEMA));
        BsonDocument rebuilt = copy.find(Filters.eq("_id", "s1")).first();
        if (rebuild.unrestored() == 0) {
            assertThat(rebuilt).isNotNull();
            assertThat(EntityState.of(rebuilt, SCHEMA)).as("rebuilt %s vs live", rebuild).isEqualTo(liveState());
        }
    }

    /**
     * A counter written before orderless on a document that shows no seq is taken in by the baseline (at horizon 0),
     * so an increment recorded afterwards reads as the sum of both.
     */
    @Test
    void a_counter_written_before_orderless_on_a_document_with_no_seq_is_taken_in() {
        live.insertOne(new BsonDocument("_id", new BsonString("s1")).append("credits", new BsonInt64(100)));
        assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT)).isEqualTo(HistoryBaseline.Begun.UNDER_WAY);
        history.baseline(() -> true);
        recording.apply(credits(1, 5));

        assertThat(liveState().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(105L)));
        Read<EntityState> read = history.asOf("s1", 1);
        assertThat(read).as("Unknowable, or the live document's 105").satisfiesAnyOf(
                r -> assertThat(r).isInstanceOf(Read.Unknowable.class),
                r -> assertThat(r.value().orElseThrow().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(105L))));
    }
}
