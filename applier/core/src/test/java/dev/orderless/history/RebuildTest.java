package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Rebuild: live documents recomputed from the history, through the guarded applier. */
@ExtendWith(MongoExtension.class)
class RebuildTest {
    private final ManualClock clock = new ManualClock();
    private MongoDatabase db;
    private MongoCollection<BsonDocument> live;
    private History history;
    private RecordingApplier recording;

    @BeforeEach
    void setUp(MongoDatabase db) {
        this.db = db;
        live = db.getCollection("live", BsonDocument.class);
        history = HistoryTest.fromTheStart(db.getCollection("live_history", BsonDocument.class), live,
                Histories.ALL_TYPES, HistoryOptions.ofDefaults().withClock(clock).withRebuildBatch(7));
        recording = history.recording(GuardedApplier.create(live, Histories.ALL_TYPES));
    }

    /** Records and applies a random history of a few entities, shuffled, with duplicates. */
    private List<Operation> applyRandomHistory(long seed) {
        Random random = new Random(seed);
        List<Operation> ops = Histories.operations(Histories.stepsOfAllTypes(random, 60, 60, 5), "r" + seed + "-");
        List<Operation> delivered = Histories.delivery(ops, 0.2, random);
        for (int from = 0; from < delivered.size(); from += 9) {
            recording.applyAll(delivered.subList(from, Math.min(delivered.size(), from + 9)));
        }
        return ops;
    }

    private MongoCollection<BsonDocument> rebuiltInto(String name) {
        MongoCollection<BsonDocument> copy = db.getCollection(name, BsonDocument.class);
        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, Histories.ALL_TYPES));
        assertThat(rebuild.complete()).as("%s", rebuild).isTrue();
        return copy;
    }

    @Test
    void a_collection_rebuilt_from_the_history_equals_the_live_one() {
        applyRandomHistory(1);

        MongoCollection<BsonDocument> copy = rebuiltInto("rebuilt");

        assertThat(EntityState.readAll(copy.find(), Histories.ALL_TYPES))
                .isEqualTo(EntityState.readAll(live.find(), Histories.ALL_TYPES));
    }

    @Test
    void a_rebuild_over_folded_states_still_equals_the_live_collection() {
        applyRandomHistory(2);
        clock.advance(Duration.ofDays(2));
        applyRandomHistory(3);
        assertThat(history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true).folded()).isPositive();

        MongoCollection<BsonDocument> copy = rebuiltInto("rebuilt");

        assertThat(EntityState.readAll(copy.find(), Histories.ALL_TYPES))
                .isEqualTo(EntityState.readAll(live.find(), Histories.ALL_TYPES));
    }

    @Test
    void a_rebuild_into_the_live_collection_changes_nothing_and_repairs_a_lost_document() {
        applyRandomHistory(4);
        var before = EntityState.readAll(live.find(), Histories.ALL_TYPES);
        String lost = Collections.min(before.keySet());
        live.deleteOne(new BsonDocument("_id", new org.bson.BsonString(lost)));

        Rebuild rebuild = history.rebuild(GuardedApplier.create(live, Histories.ALL_TYPES));

        assertThat(rebuild.applied()).as("only the lost document's operations apply again").isPositive();
        assertThat(EntityState.readAll(live.find(), Histories.ALL_TYPES)).isEqualTo(before);
    }

    @Test
    void one_entity_can_be_rebuilt_alone() {
        applyRandomHistory(5);
        var before = EntityState.readAll(live.find(), Histories.ALL_TYPES);
        String entity = Collections.max(before.keySet());
        live.deleteOne(new BsonDocument("_id", new org.bson.BsonString(entity)));

        assertThat(history.rebuild(entity, GuardedApplier.create(live, Histories.ALL_TYPES)).entities()).isEqualTo(1);
        assertThat(EntityState.readAll(live.find(), Histories.ALL_TYPES)).isEqualTo(before);
    }
}
