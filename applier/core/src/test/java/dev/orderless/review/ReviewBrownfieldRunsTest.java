package dev.orderless.review;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.history.History;
import dev.orderless.history.HistoryBaseline;
import dev.orderless.history.Read;
import dev.orderless.testing.MongoExtension;
import java.math.BigInteger;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Review of issue 50: a brownfield baseline over a counter kept as runs with a gap below the runs' top. */
@ExtendWith(MongoExtension.class)
class ReviewBrownfieldRunsTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("cents").build();

    @Test
    void a_late_increment_in_a_gap_below_the_runs_is_counted_live_and_the_history_never_answers_known_without_it(
            MongoDatabase db) {
        MongoCollection<BsonDocument> live = db.getCollection("accounts", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(live, SCHEMA);
        for (long seq = 1; seq <= 120; seq++) {   // seq 50 not delivered yet: the 101st increment coalesces runs
            if (seq != 50) {
                applier.apply(Operation.increment("e", seq, "cents", 1));
            }
        }
        System.out.println("LIVE before history: " + live.find(eq("_id", "e")).first().toJson());
        History history = History.of(db.getCollection("accounts_history", BsonDocument.class), SCHEMA).withLive(live);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);

        assertThat(history.recording(applier).apply(Operation.increment("e", 50, "cents", 1000)))
                .isEqualTo(Outcome.APPLIED);

        BsonDocument stored = live.find(eq("_id", "e")).first();
        BigInteger liveValue = EntityState.of(stored, SCHEMA).counters().get("cents");
        assertThat(liveValue).isEqualTo(BigInteger.valueOf(1119));
        Read<EntityState> read = history.asOf("e", 120);
        System.out.println("READ: " + read);
        if (read instanceof Read.Known<EntityState> known) {
            assertThat(known.answer().counters().get("cents")).as("Known must equal the live value").isEqualTo(liveValue);
        }
    }

    @Test
    void a_late_delete_in_a_gap_below_the_runs_is_applied_live_and_the_history_never_answers_known_without_it(
            MongoDatabase db) {
        MongoCollection<BsonDocument> live = db.getCollection("accounts", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(live, SCHEMA);
        for (long seq = 1; seq <= 120; seq++) {   // seq 50 is a delete not delivered yet
            if (seq != 50) {
                applier.apply(Operation.increment("e", seq, "cents", 1));
            }
        }
        History history = History.of(db.getCollection("accounts_history", BsonDocument.class), SCHEMA).withLive(live);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);

        assertThat(history.recording(applier).apply(Operation.delete("e", 50))).isEqualTo(Outcome.APPLIED);

        EntityState liveState = EntityState.of(live.find(eq("_id", "e")).first(), SCHEMA);
        assertThat(liveState.counters().get("cents")).isEqualTo(BigInteger.valueOf(70));
        Read<EntityState> read = history.asOf("e", 120);
        System.out.println("READ delete: " + read);
        if (read instanceof Read.Known<EntityState> known) {
            assertThat(known.answer()).as("Known must equal the live state").isEqualTo(liveState);
        }
    }

    @Test
    void a_collection_rebuilt_from_a_baseline_over_runs_counts_a_redelivered_increment_once_as_the_live_one_does(
            MongoDatabase db) {
        MongoCollection<BsonDocument> live = db.getCollection("accounts", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(live, SCHEMA);
        for (long seq = 1; seq <= 120; seq++) {   // no gap: runs [1..102] and the rest pending
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        History history = History.of(db.getCollection("accounts_history", BsonDocument.class), SCHEMA).withLive(live);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = GuardedApplier.create(copy, SCHEMA);
        assertThat(history.rebuild(target).complete()).isTrue();
        System.out.println("REBUILT " + copy.find(eq("_id", "e")).first().toJson());

        Operation redelivered = Operation.increment("e", 30, "cents", 1);
        assertThat(applier.apply(redelivered)).as("live").isEqualTo(Outcome.DUPLICATE);
        assertThat(target.apply(redelivered)).as("rebuilt").isEqualTo(Outcome.DUPLICATE);
        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA))
                .isEqualTo(EntityState.of(live.find(eq("_id", "e")).first(), SCHEMA));
    }
}
