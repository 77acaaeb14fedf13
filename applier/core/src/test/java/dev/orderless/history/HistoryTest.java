package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.CannotApplyException;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.SetField;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link History}: one record per (entity, seq), and the states the records give. */
@ExtendWith(MongoExtension.class)
class HistoryTest {
    static final CollectionSchema SCHEMA = CollectionSchema.builder().set(SetField.of("classes", "name"))
            .register("name").build();

    private MongoCollection<BsonDocument> students;
    private MongoCollection<BsonDocument> records;
    private SimpleMeterRegistry meters;
    private History history;
    private RecordingApplier recording;

    @BeforeEach
    void setUp(MongoDatabase db) {
        students = db.getCollection("students", BsonDocument.class);
        records = db.getCollection(History.collectionName("students"), BsonDocument.class);
        meters = new SimpleMeterRegistry();
        history = fromTheStart(records, students, SCHEMA, HistoryOptions.ofDefaults().withMeters(meters));
        recording = history.recording(GuardedApplier.create(students, SCHEMA));
    }

    /**
     * The documented start, on an empty collection: the history knows its live collection, and its start is decided
     * before anything is recorded (complete at once: every entity is recorded from its first operation).
     */
    static History fromTheStart(MongoCollection<BsonDocument> records, MongoCollection<BsonDocument> live,
                                CollectionSchema schema, HistoryOptions options) {
        History history = History.of(records, schema, options).withLive(live);
        assertThat(history.beginBaseline(HistoryBaseline.Start.DETECT)).isEqualTo(HistoryBaseline.Begun.COMPLETE);
        return history;
    }

    /** The records and folded states in {@code records}, without its baseline status. */
    static long recordsIn(MongoCollection<BsonDocument> records) {
        return records.countDocuments(com.mongodb.client.model.Filters.exists(HistoryFields.ID_ENTITY));
    }

    private double counted(Recorded outcome) {
        return meters.get("orderless.history.recorded").tag("outcome", outcome.tag()).counter().count();
    }

    @Test
    void the_same_operation_recorded_twice_is_one_record_and_a_duplicate() {
        Operation add = Operation.add("s1", 1, "classes", "CS 101");

        assertThat(history.record(add)).isEqualTo(Recorded.RECORDED);
        assertThat(history.record(add)).isEqualTo(Recorded.DUPLICATE);
        assertThat(recordsIn(records)).isEqualTo(1);
        assertThat(counted(Recorded.DUPLICATE)).isEqualTo(1);
    }

    @Test
    void a_different_operation_with_a_recorded_seq_is_a_collision_and_the_first_record_stays() {
        history.record(Operation.assign("s1", 5, "name", new BsonString("Ada")));

        assertThat(history.record(Operation.assign("s1", 5, "name", new BsonString("Grace"))))
                .isEqualTo(Recorded.COLLISION);
        assertThat(history.versions("s1").versions()).extracting(Version::op)
                .containsExactly(Operation.assign("s1", 5, "name", new BsonString("Ada")));
        assertThat(counted(Recorded.COLLISION)).isEqualTo(1);
    }

    @Test
    void a_batch_is_recorded_once_with_its_duplicates_and_collisions_told_apart() {
        history.record(Operation.add("s1", 1, "classes", "CS 101"));
        history.record(Operation.assign("s1", 2, "name", new BsonString("Ada")));

        List<Recorded> outcomes = history.recordAll(List.of(
                Operation.add("s1", 1, "classes", "CS 101"),                  // recorded before
                Operation.assign("s1", 2, "name", new BsonString("Grace")),   // another op with a recorded seq
                Operation.remove("s1", 3, "classes", "CS 101"),               // new
                Operation.remove("s1", 3, "classes", "CS 101"),               // twice in the batch
                Operation.add("s1", 4, "classes", "MA 201"),                  // new
                Operation.add("s1", 4, "classes", "PH 301")));                // its seq taken in the batch

        assertThat(outcomes).containsExactly(Recorded.DUPLICATE, Recorded.COLLISION, Recorded.RECORDED,
                Recorded.DUPLICATE, Recorded.RECORDED, Recorded.COLLISION);
        assertThat(recordsIn(records)).isEqualTo(4);
    }

    @Test
    void versions_list_each_operation_in_seq_order_with_the_state_after_it_whatever_the_order_they_arrived_in() {
        List<Operation> ops = List.of(Operation.add("s1", 1, "classes", "CS 101"),
                Operation.assign("s1", 2, "name", new BsonString("Ada")), Operation.remove("s1", 3, "classes", "CS 101"),
                Operation.delete("s1", 4), Operation.add("s1", 5, "classes", "MA 201"));
        List.of(ops.get(3), ops.get(0), ops.get(4), ops.get(2), ops.get(1)).forEach(recording::apply);

        Versions versions = history.versions("s1");

        assertThat(versions.versions()).extracting(Version::op).containsExactlyElementsOf(ops);
        for (int i = 0; i < ops.size(); i++) {
            assertThat(versions.versions().get(i).after())
                    .isEqualTo(new ReferenceModel(SCHEMA).replay(ops.subList(0, i + 1)).get("s1"));
        }
        assertThat(versions.current()).isEqualTo(EntityState.of(students.find().first(), SCHEMA));
        assertThat(versions.horizon()).isZero();
        assertThat(versions.late()).isEmpty();
    }

    @Test
    void the_state_as_of_a_seq_holds_a_register_value_the_live_document_has_overwritten() {
        recording.apply(Operation.assign("s1", 10, "name", new BsonString("Ada")));
        recording.apply(Operation.assign("s1", 20, "name", new BsonString("Grace")));

        assertThat(history.asOf("s1", 15).value()).hasValueSatisfying(state ->
                assertThat(state.registers().get("name").value()).isEqualTo(new BsonString("Ada")));
        assertThat(history.asOf("s1", 5).value()).hasValueSatisfying(state ->
                assertThat(state.registers()).isEmpty());
        assertThat(history.asOf("nobody", 5).value()).hasValueSatisfying(state ->
                assertThat(state).isEqualTo(History.empty("nobody")));
    }

    @Test
    void changes_are_the_operations_between_two_seqs() {
        for (long seq = 1; seq <= 5; seq++) {
            recording.apply(Operation.assign("s1", seq, "name", new BsonString("v" + seq)));
        }

        assertThat(history.changes("s1", 2, 4).value()).hasValueSatisfying(changes ->
                assertThat(changes).extracting(Version::seq).containsExactly(3L, 4L));
    }

    @Test
    void with_seqs_that_are_times_the_state_as_of_an_instant_is_the_state_as_of_the_last_seq_stamped_by_then() {
        recording.apply(Operation.assign("s1", 1_000, "name", new BsonString("Ada")));
        recording.apply(Operation.assign("s1", 2_000, "name", new BsonString("Grace")));
        SeqTimeline millis = Instant::toEpochMilli;   // a stamper whose seq is the epoch millisecond

        assertThat(history.asOf("s1", Instant.ofEpochMilli(1_500), millis).value()).hasValueSatisfying(state ->
                assertThat(state.registers().get("name").value()).isEqualTo(new BsonString("Ada")));
    }

    @Test
    void bad_input_is_refused_and_not_recorded() {
        Operation undeclared = Operation.assign("s1", 1, "undeclared", new BsonString("x"));

        assertThatThrownBy(() -> recording.apply(undeclared)).isInstanceOf(CannotApplyException.class);
        List<BatchResult> results = recording.applyAll(List.of(undeclared, Operation.add("s1", 2, "classes", "CS 101")));

        assertThat(results.get(0)).isInstanceOf(BatchResult.Refused.class);
        assertThat(results.get(1)).isEqualTo(new BatchResult.Done(results.get(1).op(), Outcome.APPLIED));
        assertThat(recordsIn(records)).isEqualTo(1);
    }

    @Test
    void a_history_of_another_schema_than_its_applier_is_refused_at_once() {
        CollectionSchema other = CollectionSchema.builder().register("name").build();

        assertThatThrownBy(() -> History.of(records, other).recording(GuardedApplier.create(students, SCHEMA)))
                .hasMessageContaining("schema");
    }
}
