package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An element appears at most once across its live and tombstone arrays: nothing orderless writes breaks that,
 * but a write from outside can. Such an element is read as its highest seq, and reported, never read as
 * whichever entry happens to come last.
 */
@ExtendWith(MongoExtension.class)
class BrokenInvariantTest {

    private static BsonDocument entry(String name, long seq) {
        return new BsonDocument("name", new BsonString(name)).append("seq", new BsonInt64(seq));
    }

    private static BsonDocument student(BsonArray live, BsonArray tombstones) {
        return new BsonDocument("_id", new BsonString("s-1")).append("classes", live)
                .append("deleted_classes", tombstones).append("_floor", new BsonInt64(500))
                .append("_gcFloor", new BsonInt64(0)).append("_v", new BsonInt64(7));
    }

    @Test
    void two_tombstones_of_one_element_read_as_the_one_with_the_highest_seq_whatever_their_order() {
        BsonDocument doc = student(new BsonArray(), new BsonArray(java.util.List.of(entry("b", 510), entry("b", 500))));

        EntityState state = EntityState.of(doc, Students.SCHEMA);

        assertThat(state.tombstones()).isEqualTo(Map.of("classes", Map.of("b", 510L)));
    }

    @Test
    void an_element_both_live_and_tombstoned_reads_as_the_entry_with_the_higher_seq() {
        BsonDocument liveAbove = student(new BsonArray(java.util.List.of(entry("b", 520))),
                new BsonArray(java.util.List.of(entry("b", 510))));
        BsonDocument removedAbove = student(new BsonArray(java.util.List.of(entry("b", 505))),
                new BsonArray(java.util.List.of(entry("b", 510))));

        assertThat(EntityState.of(liveAbove, Students.SCHEMA).live().get("classes")).containsOnlyKeys("b");
        assertThat(EntityState.of(liveAbove, Students.SCHEMA).tombstones()).isEmpty();
        assertThat(EntityState.of(removedAbove, Students.SCHEMA).live()).isEmpty();
        assertThat(EntityState.of(removedAbove, Students.SCHEMA).tombstones()).isEqualTo(Map.of("classes", Map.of("b", 510L)));
    }

    @Test
    void an_add_below_the_highest_of_two_entries_is_superseded_and_the_document_counted(MongoDatabase db) {
        MongoCollection<BsonDocument> students = Students.collection(db);
        students.insertOne(student(new BsonArray(), new BsonArray(java.util.List.of(entry("b", 500), entry("b", 510)))));
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA, ApplierOptions.ofDefaults().withMeters(meters));

        Outcome outcome = applier.apply(Students.enroll("s-1", 505, "b"));

        assertThat(outcome).as("the remove at 510 wins over an add at 505").isEqualTo(Outcome.SUPERSEDED);
        assertThat(meters.counter("orderless.apply.invariant.broken", "collection", "students").count()).isEqualTo(1);
    }

    @Test
    void an_add_above_both_entries_of_an_element_is_applied_and_leaves_it_one_entry(MongoDatabase db) {
        MongoCollection<BsonDocument> students = Students.collection(db);
        students.insertOne(student(new BsonArray(java.util.List.of(entry("b", 503))), new BsonArray(java.util.List.of(entry("b", 508)))));
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA);

        assertThat(applier.apply(Students.enroll("s-1", 510, "b"))).isEqualTo(Outcome.APPLIED);

        BsonDocument stored = students.find().first();
        assertThat(DuplicateEntries.in(stored, Students.SCHEMA)).isEmpty();
        assertThat(EntityState.of(stored, Students.SCHEMA).live().get("classes").get("b").seq()).isEqualTo(510);
    }

    @Test
    void a_remove_above_both_entries_of_an_element_is_applied_and_leaves_it_one_tombstone(MongoDatabase db) {
        MongoCollection<BsonDocument> students = Students.collection(db);
        students.insertOne(student(new BsonArray(java.util.List.of(entry("b", 508))), new BsonArray(java.util.List.of(entry("b", 503)))));
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA);

        assertThat(applier.apply(Students.unenroll("s-1", 510, "b"))).isEqualTo(Outcome.APPLIED);

        BsonDocument stored = students.find().first();
        assertThat(DuplicateEntries.in(stored, Students.SCHEMA)).isEmpty();
        assertThat(EntityState.of(stored, Students.SCHEMA).tombstones()).isEqualTo(Map.of("classes", Map.of("b", 510L)));
    }

    @Test
    void an_op_at_the_seq_of_both_a_live_entry_and_a_tombstone_is_a_seq_collision(MongoDatabase db) {
        MongoCollection<BsonDocument> students = Students.collection(db);
        students.insertOne(student(new BsonArray(java.util.List.of(entry("b", 505))), new BsonArray(java.util.List.of(entry("b", 505)))));
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA);

        assertThat(applier.apply(Students.enroll("s-1", 505, "b"))).isEqualTo(Outcome.SEQ_COLLISION);
        assertThat(applier.apply(Students.unenroll("s-1", 505, "b"))).isEqualTo(Outcome.SEQ_COLLISION);
    }
}
