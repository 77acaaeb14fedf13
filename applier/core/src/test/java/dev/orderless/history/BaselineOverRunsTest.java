package dev.orderless.history;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
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
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A history turned on over a counter whose increments the live document coalesced into runs (past its 250 pending
 * ones), as history.md documents it (withLive, the start decided, the baseline pass): a late operation in a gap between
 * runs is judged and merged as the live applier applies it, never answered Known without it; and a collection rebuilt
 * from it counts each seq once, as the live one does (found by review).
 */
@ExtendWith(MongoExtension.class)
class BaselineOverRunsTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("cents").build();

    private final ManualClock clock = new ManualClock();
    private MongoDatabase db;
    private MongoCollection<BsonDocument> live;
    private GuardedApplier applier;

    @BeforeEach
    void setUp(MongoDatabase db) {
        this.db = db;
        live = db.getCollection("accounts", BsonDocument.class);
        applier = GuardedApplier.create(live, SCHEMA, ApplierOptions.ofDefaults().withClock(clock));
    }

    /** Increments of 1 at seqs 1 to 300 but {@code skipped}, before the history is on; then its baseline. */
    private History baselineOver(long skipped) {
        for (long seq = 1; seq <= 300; seq++) {
            if (seq != skipped) {
                applier.apply(Operation.increment("e", seq, "cents", 1));
            }
        }
        assertThat(live.find(eq("_id", "e")).first()).as("coalesced into runs").containsKey("_incRuns");
        History history = History.of(db.getCollection("accounts_history", BsonDocument.class), SCHEMA).withLive(live);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);
        return history;
    }

    private EntityState liveState() {
        return EntityState.of(live.find(eq("_id", "e")).first(), SCHEMA);
    }

    @Test
    void a_late_increment_in_a_gap_between_runs_is_merged_as_the_live_document_counts_it() {
        History history = baselineOver(50);

        assertThat(history.recording(applier).apply(Operation.increment("e", 50, "cents", 1000)))
                .isEqualTo(Outcome.APPLIED);

        assertThat(liveState().counters().get("cents")).hasToString("1299");
        assertThat(history.asOf("e", 300).value()).as("Known, and the live state").contains(liveState());
    }

    @Test
    void a_late_delete_in_a_gap_between_runs_is_merged_as_the_live_document_applies_it() {
        History history = baselineOver(50);

        assertThat(history.recording(applier).apply(Operation.delete("e", 50))).isEqualTo(Outcome.APPLIED);

        assertThat(liveState().counters().get("cents")).hasToString("250");
        assertThat(history.asOf("e", 300).value()).as("Known, and the live state").contains(liveState());
    }

    @Test
    void a_collection_rebuilt_over_runs_counts_a_seq_delivered_again_once_as_the_live_one_does() {
        History history = baselineOver(0);
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = GuardedApplier.create(copy, SCHEMA);
        assertThat(history.rebuild(target).complete()).isTrue();

        Operation again = Operation.increment("e", 30, "cents", 1);
        assertThat(applier.apply(again)).as("live").isEqualTo(Outcome.DUPLICATE);
        assertThat(target.apply(again)).as("rebuilt").isEqualTo(Outcome.DUPLICATE);
        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA)).isEqualTo(liveState());
    }

    @Test
    void a_collection_rebuilt_over_a_compaction_fold_refuses_a_seq_delivered_again_as_the_live_one_does() {
        for (long seq = 1; seq <= 20; seq++) {
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        clock.advance(Duration.ofHours(2));
        TombstoneCompactor.create(live, SCHEMA, Duration.ofHours(1), ApplierOptions.ofDefaults().withClock(clock))
                .compact("e");   // _incFloor 20
        History history = History.of(db.getCollection("accounts_history", BsonDocument.class), SCHEMA).withLive(live);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = GuardedApplier.create(copy, SCHEMA);
        assertThat(history.rebuild(target).complete()).isTrue();

        Operation again = Operation.increment("e", 7, "cents", 1);
        assertThat(applier.apply(again)).as("live").isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(target.apply(again)).as("rebuilt: not counted a second time").isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA)).isEqualTo(liveState());
    }
}
