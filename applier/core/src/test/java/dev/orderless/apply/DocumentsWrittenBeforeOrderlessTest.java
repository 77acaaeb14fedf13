package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.CannotApplyException;
import dev.orderless.testing.MongoExtension;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A collection that held documents before orderless wrote to it (no {@code _seq}, {@code _v}, {@code _floor}, and
 * set entries without a seq): each value and entry already there reads as written at seq 0, older than any
 * operation, so operations apply over it in any order, as docs/operations.md promises.
 */
@ExtendWith(MongoExtension.class)
class DocumentsWrittenBeforeOrderlessTest {

    private static MongoCollection<BsonDocument> withAStudentOfBefore(MongoDatabase db) {
        MongoCollection<BsonDocument> students = Students.collection(db);
        students.insertOne(new BsonDocument("_id", new BsonString("s-1")).append("name", new BsonString("Ada"))
                .append("classes", new BsonArray(List.of(new BsonDocument("name", new BsonString("CS 101")),
                        new BsonDocument("name", new BsonString("MA 201"))))));
        return students;
    }

    @Test
    void operations_apply_over_it_in_any_order_as_if_it_had_been_written_at_seq_0(MongoDatabase db) {
        MongoCollection<BsonDocument> students = withAStudentOfBefore(db);
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA);

        List<Outcome> outcomes = List.of(
                applier.apply(Students.unenroll("s-1", 7, "MA 201")),
                applier.apply(Students.rename("s-1", 5, "Grace")),
                applier.apply(Students.enroll("s-1", 3, "CS 101", "Intro")),
                applier.apply(Students.rename("s-1", 4, "Lin")));

        assertThat(outcomes).containsExactly(Outcome.APPLIED, Outcome.APPLIED, Outcome.APPLIED, Outcome.SUPERSEDED);
        EntityState state = EntityState.of(students.find().first(), Students.SCHEMA);
        assertThat(state.registers().get("name").value()).isEqualTo(new BsonString("Grace"));
        assertThat(state.live().get("classes")).containsOnlyKeys("CS 101");
        assertThat(state.live().get("classes").get("CS 101").seq()).isEqualTo(3);
        assertThat(state.tombstones()).isEqualTo(Map.of("classes", Map.of("MA 201", 7L)));
    }

    @Test
    void a_delete_removes_what_was_there_before_as_older_than_itself(MongoDatabase db) {
        MongoCollection<BsonDocument> students = withAStudentOfBefore(db);
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA);

        assertThat(applier.apply(Students.leave("s-1", 2))).isEqualTo(Outcome.APPLIED);

        EntityState state = EntityState.of(students.find().first(), Students.SCHEMA);
        assertThat(state.floor()).isEqualTo(2);
        assertThat(state.live()).isEmpty();
        assertThat(state.registers()).isEmpty();
        assertThat(students.find().first().containsKey("name")).as("the name it had, cleared").isFalse();
    }

    @Test
    void a_value_it_had_reads_as_a_register_written_at_seq_0(MongoDatabase db) {
        MongoCollection<BsonDocument> students = withAStudentOfBefore(db);

        EntityState state = EntityState.of(students.find().first(), Students.SCHEMA);

        assertThat(state.registers()).isEqualTo(Map.of("name", new EntityState.Register(0, new BsonString("Ada"))));
        assertThat(state.live().get("classes")).containsOnlyKeys("CS 101", "MA 201");
    }

    @Test
    void a_set_held_as_plain_values_is_refused_naming_the_document_and_the_field_and_left_as_it_was(MongoDatabase db) {
        MongoCollection<BsonDocument> students = Students.collection(db);
        BsonDocument before = new BsonDocument("_id", new BsonString("s-1"))
                .append("classes", new BsonArray(List.of(new BsonString("CS 101"), new BsonString("MA 201"))));
        students.insertOne(before.clone());
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA);

        for (Operation op : List.of(Students.enroll("s-1", 3, "PH 1", "Physics"), Students.unenroll("s-1", 4, "CS 101"),
                Students.leave("s-1", 5))) {
            assertThatThrownBy(() -> applier.apply(op)).as(op.toString())
                    .isInstanceOfSatisfying(CannotApplyException.class,
                            e -> assertThat(e.kind()).isEqualTo(CannotApplyException.Kind.NO_PROGRESS))
                    .hasMessageContaining("'s-1'")
                    .hasMessageContaining("'classes' entry 0 is a string, not a document")
                    .hasMessageContaining("migrate it");
        }
        assertThat(students.find().first()).as("left as it was").isEqualTo(before);
    }

    @Test
    void a_set_held_as_one_value_is_refused_and_left_as_it_was(MongoDatabase db) {
        MongoCollection<BsonDocument> students = Students.collection(db);
        BsonDocument before = new BsonDocument("_id", new BsonString("s-1")).append("classes", new BsonString("CS 101"));
        students.insertOne(before.clone());
        GuardedApplier applier = GuardedApplier.create(students, Students.SCHEMA);

        for (Operation op : List.of(Students.enroll("s-1", 3, "PH 1", "Physics"), Students.leave("s-1", 5))) {
            assertThatThrownBy(() -> applier.apply(op)).as(op.toString())
                    .isInstanceOf(CannotApplyException.class)
                    .hasMessageContaining("'classes' is a string, not an array");
        }
        assertThat(students.find().first()).isEqualTo(before);
    }
}
