package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.unenroll;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The applier article's walkthroughs, and the cases it leaves open, applied by the guarded applier. */
@ExtendWith(MongoExtension.class)
class ArticleWalkthroughTest {
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;

    @BeforeEach
    void setUp(MongoDatabase db) {
        students = Students.collection(db);
        applier = GuardedApplier.create(students, Students.SCHEMA);
    }

    @Test
    void insert_then_delete_leaves_the_student_unenrolled() {
        assertThat(applier.apply(enroll("student-1", 1001, "CS 101"))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(unenroll("student-1", 1002, "CS 101"))).isEqualTo(Outcome.APPLIED);

        assertEnrolledIn("student-1");
        assertMatchesOracle(enroll("student-1", 1001, "CS 101"), unenroll("student-1", 1002, "CS 101"));
    }

    @Test
    void delete_then_insert_leaves_the_student_unenrolled() {
        assertThat(applier.apply(unenroll("student-1", 1002, "CS 101"))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(enroll("student-1", 1001, "CS 101"))).isEqualTo(Outcome.SUPERSEDED);

        assertEnrolledIn("student-1");
        assertMatchesOracle(enroll("student-1", 1001, "CS 101"), unenroll("student-1", 1002, "CS 101"));
    }

    @Test
    void the_1_3_2_order_keeps_the_reenrollment() {
        assertThat(applier.apply(enroll("student-1", 1, "CS 101"))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(enroll("student-1", 3, "CS 101"))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(unenroll("student-1", 2, "CS 101"))).isEqualTo(Outcome.SUPERSEDED);

        assertEnrolledIn("student-1", "CS 101");
        assertMatchesOracle(enroll("student-1", 1, "CS 101"), unenroll("student-1", 2, "CS 101"),
                enroll("student-1", 3, "CS 101"));
    }

    @Test
    void a_stale_op_does_not_create_a_second_document() {
        applier.apply(enroll("student-1", 1001, "CS 101"));
        applier.apply(unenroll("student-1", 1002, "CS 101"));

        assertThat(applier.apply(enroll("student-1", 1001, "CS 101"))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(applier.apply(unenroll("student-1", 1002, "CS 101"))).isEqualTo(Outcome.DUPLICATE);

        assertThat(students.countDocuments()).isEqualTo(1);
        assertEnrolledIn("student-1");
    }

    private void assertEnrolledIn(String student, String... classes) {
        EntityState state = EntityState.of(students.find(eq("_id", student)).first(), Students.SCHEMA);
        assertThat(state.live().getOrDefault("classes", java.util.Map.of()).keySet()).containsExactly(classes);
    }

    private void assertMatchesOracle(Operation... history) {
        var expected = new ReferenceModel(Students.SCHEMA).replay(List.of(history));
        expected.forEach((entity, state) -> assertThat(
                EntityState.of(students.find(eq("_id", entity)).first(), Students.SCHEMA)).isEqualTo(state));
    }
}
