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
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The baseline, retention and a rebuild where counters and ranked registers meet what the live document holds
 * beyond the records (issue 39, from an adversarial review): values written before orderless, sums folded by the
 * live compaction, assignments applied without recording. Each read is Unknowable or the live document's state.
 */
@ExtendWith(MongoExtension.class)
class CountersAndRankedBaselineTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("credits")
            .ranked("status", "APPLIED", "ENROLLED", "GRADUATED", "WITHDRAWN").register("name").register("city")
            .build();
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

    private static Operation city(long seq, String value) {
        return Operation.assign("s1", seq, "city", new BsonString(value));
    }

    private EntityState liveState() {
        return EntityState.of(live.find(Filters.eq("_id", "s1")).first(), SCHEMA);
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

        assertThat(liveState().counters()).isEqualTo(Map.of("credits", 8L));
        Read<EntityState> read = history.asOf("s1", 3);
        assertThat(read).as("Unknowable, or the live document's 8").satisfiesAnyOf(
                r -> assertThat(r).isInstanceOf(Read.Unknowable.class),
                r -> assertThat(r.value().orElseThrow().counters()).isEqualTo(Map.of("credits", 8L)));
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

        assertThat(liveState().counters()).isEqualTo(Map.of("credits", 105L));
        Read<EntityState> read = history.asOf("s1", 1);
        assertThat(read).as("Unknowable, or the live document's 105").satisfiesAnyOf(
                r -> assertThat(r).isInstanceOf(Read.Unknowable.class),
                r -> assertThat(r.value().orElseThrow().counters()).isEqualTo(Map.of("credits", 105L)));
    }
}
