package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Retention: old records folded into one state per entity, and reads that say when they cannot tell. */
@ExtendWith(MongoExtension.class)
class RetentionTest {
    private static final ReferenceModel ORACLE = new ReferenceModel(HistoryTest.SCHEMA);

    private final ManualClock clock = new ManualClock();
    private MongoCollection<BsonDocument> records;
    private History history;
    private RecordingApplier recording;

    @BeforeEach
    void setUp(MongoDatabase db) {
        records = db.getCollection("students_history", BsonDocument.class);
        MongoCollection<BsonDocument> students = db.getCollection("students", BsonDocument.class);
        history = HistoryTest.fromTheStart(records, students, HistoryTest.SCHEMA,
                HistoryOptions.ofDefaults().withClock(clock));
        recording = history.recording(GuardedApplier.create(students, HistoryTest.SCHEMA));
    }

    private static Operation rename(long seq) {
        return Operation.assign("s1", seq, "name", new BsonString("v" + seq));
    }

    @Test
    void records_older_than_the_cutoff_are_folded_into_one_state_and_the_newer_versions_stay() {
        List<Operation> ops = List.of(Operation.add("s1", 1, "classes", "CS 101"), rename(2),
                Operation.remove("s1", 3, "classes", "CS 101"), rename(4), Operation.add("s1", 5, "classes", "MA 201"));
        ops.subList(0, 3).forEach(recording::apply);
        clock.advance(Duration.ofDays(2));
        ops.subList(3, 5).forEach(recording::apply);

        RetentionPass pass = history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);

        assertThat(pass).isEqualTo(new RetentionPass(1, 3, 0, true));
        Versions versions = history.versions("s1");
        assertThat(versions.horizon()).isEqualTo(3);
        assertThat(versions.folded()).isEqualTo(ORACLE.replay(ops.subList(0, 3)).get("s1"));
        assertThat(versions.versions()).extracting(Version::seq).containsExactly(4L, 5L);
        assertThat(history.asOf("s1", 4).value()).contains(ORACLE.replay(ops.subList(0, 4)).get("s1"));
        assertThat(HistoryTest.recordsIn(records)).as("the folded state and two records").isEqualTo(3);
    }

    @Test
    void a_read_below_the_horizon_says_so_instead_of_returning_a_state() {
        recording.apply(rename(1));
        recording.apply(rename(2));
        clock.advance(Duration.ofDays(2));
        history.retain(clock.instant(), () -> true);

        assertThat(history.asOf("s1", 1)).isInstanceOfSatisfying(Read.Unknowable.class,
                r -> assertThat(r.reason()).contains("below its retention horizon 2"));
        assertThat(history.changes("s1", 1, 2)).isInstanceOf(Read.Unknowable.class);
        assertThat(history.asOf("s1", 2).value()).hasValueSatisfying(s ->
                assertThat(s.registers().get("name").value()).isEqualTo(new BsonString("v2")));
    }

    @Test
    void a_young_record_with_a_lower_seq_keeps_the_horizon_below_it() {
        recording.apply(rename(1));
        recording.apply(rename(2));
        recording.apply(rename(4));
        clock.advance(Duration.ofDays(2));
        recording.apply(rename(3));   // delivered late, recorded now

        history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);

        Versions versions = history.versions("s1");
        assertThat(versions.horizon()).isEqualTo(2);
        assertThat(versions.versions()).extracting(Version::seq).containsExactly(3L, 4L);
    }

    @Test
    void an_operation_recorded_below_a_folded_horizon_makes_every_read_of_its_entity_unknowable() {
        recording.apply(rename(1));
        recording.apply(rename(5));
        clock.advance(Duration.ofDays(2));
        history.retain(clock.instant(), () -> true);

        recording.apply(rename(3));   // later than the retention period allows

        assertThat(history.asOf("s1", 9)).isInstanceOfSatisfying(Read.Unknowable.class,
                r -> assertThat(r.reason()).contains("recorded after retention folded"));
        assertThat(history.versions("s1").late()).extracting(Operation::seq).containsExactly(3L);
        clock.advance(Duration.ofDays(2));
        assertThat(history.retain(clock.instant(), () -> true).late()).as("kept, and counted once it is old").isEqualTo(1);
    }

    @Test
    void records_a_pass_folded_but_did_not_drop_are_skipped_and_dropped_by_the_next_pass() {
        recording.apply(rename(1));
        recording.apply(rename(2));
        BsonDocument leftover = records.find(com.mongodb.client.model.Filters.exists(HistoryFields.ID_ENTITY)).first();
        clock.advance(Duration.ofDays(2));
        history.retain(clock.instant(), () -> true);
        records.insertOne(leftover);   // as a pass that stopped between writing the state and dropping would leave it

        assertThat(history.asOf("s1", 2)).isInstanceOf(Read.Known.class);
        assertThat(history.versions("s1").late()).isEmpty();
        history.retain(clock.instant(), () -> true);
        assertThat(HistoryTest.recordsIn(records)).as("only the folded state").isEqualTo(1);
    }

    @Test
    void folding_again_at_the_same_cutoff_changes_nothing() {
        recording.apply(rename(1));
        clock.advance(Duration.ofDays(2));
        recording.apply(rename(2));
        Instant cutoff = clock.instant().minus(Duration.ofDays(1));
        history.retain(cutoff, () -> true);
        EntityState before = history.asOf("s1", 2).value().orElseThrow();

        assertThat(history.retain(cutoff, () -> true)).isEqualTo(new RetentionPass(0, 0, 0, true));
        assertThat(history.asOf("s1", 2).value()).contains(before);
    }

    @Test
    void a_tombstone_compaction_dropped_stays_accounted_for_once_its_record_is_folded_and_its_element_added_again(
            MongoDatabase db) {
        MongoCollection<BsonDocument> students = db.getCollection("students", BsonDocument.class);
        History checked = history.withLive(students);   // reads check the live document's compaction floor
        checked.baseline(() -> true);   // the collection is empty: nothing to take in, complete at once
        List<Operation> ops = List.of(Operation.add("s1", 1, "classes", "CS 101"),
                Operation.remove("s1", 2, "classes", "CS 101"), Operation.add("s1", 3, "classes", "CS 101"));
        recording.apply(ops.get(0));
        recording.apply(ops.get(1));
        students.updateOne(new BsonDocument("_id", new BsonString("s1")), BsonDocument.parse(
                "{$pull: {deleted_classes: {name: 'CS 101'}}, $set: {_gcFloor: {$numberLong: '2'}},"
                        + " $inc: {_v: {$numberLong: '1'}}}"));   // as TombstoneCompactor does after its grace
        clock.advance(Duration.ofDays(2));
        checked.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);   // remove at 2 folded and dropped
        recording.apply(ops.get(2));
        clock.advance(Duration.ofDays(2));
        checked.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);   // the state no longer shows seq 2

        assertThat(checked.asOf("s1", 3).value()).contains(ORACLE.replay(ops).get("s1"));
    }

    @Test
    void a_schedule_runs_one_pass_per_interval_across_processes(MongoDatabase db) {
        recording.apply(rename(1));
        clock.advance(Duration.ofDays(2));
        MongoLeaseProvider leases = MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class),
                LeaseOptions.ofDefaults().withClock(clock));
        RetentionSchedule a = RetentionSchedule.create(history, leases, Duration.ofDays(1), "a", Duration.ofHours(1));
        RetentionSchedule b = RetentionSchedule.create(history, leases, Duration.ofDays(1), "b", Duration.ofHours(1));

        assertThat(a.runIfDue()).hasValueSatisfying(p -> assertThat(p.folded()).isEqualTo(1));
        assertThat(b.runIfDue()).as("the interval has not passed").isEmpty();
        clock.advance(Duration.ofHours(2));
        assertThat(b.runIfDue()).isPresent();
    }
}
