package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.leave;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.CannotApplyException;
import dev.orderless.backends.MongoBackend;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link GuardedApplier#applyAll} reports for each op what {@link GuardedApplier#apply} would, run alone in some
 * serial order of everything applied meanwhile (another consumer included): never APPLIED twice for one
 * delivery, a collision where every order sees one, and no progress where {@code apply} refuses.
 */
@ExtendWith(MongoExtension.class)
class BatchOutcomesTest {
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;

    /** A client whose batches run {@link #hooks}: another consumer at a chosen point. */
    private final FirstCommandHooks hooks = new FirstCommandHooks();
    private MongoClient listened;
    private GuardedApplier listenedApplier;

    @BeforeEach
    void setUp(MongoBackend backend, MongoDatabase db) {
        students = Students.collection(db);
        applier = GuardedApplier.create(students, Students.SCHEMA);
        listened = hooks.client(backend);
        listenedApplier = GuardedApplier.create(listened.getDatabase(db.getName())
                .getCollection("students", BsonDocument.class), Students.SCHEMA);
    }

    @AfterEach
    void tearDown() {
        listened.close();
    }

    private static Outcome outcome(BatchResult r) {
        assertThat(r).isInstanceOf(BatchResult.Done.class);
        return ((BatchResult.Done) r).outcome();
    }

    // One delivery is applied once: an op another consumer applied between this batch's read and its write
    // is a duplicate here, whatever else its round wrote.

    @Test
    void an_unhinted_refresh_that_lost_to_a_concurrent_apply_of_the_same_op_is_a_duplicate_not_a_second_applied() {
        applier.apply(enroll("s1", 3, "CS 101"));
        applier.apply(enroll("s2", 4, "CS 102"));
        Operation redelivered = enroll("s1", 5, "CS 101");
        AtomicReference<Outcome> other = new AtomicReference<>();
        hooks.beforeFirstUpdate.set(() -> other.set(applier.apply(redelivered)));   // the same message, on another consumer

        // no hint: each blind move misses (the elements are live) and the refresh beside it decides: s1's misses
        // (the other consumer refreshed it first), then a read
        List<BatchResult> results = listenedApplier.applyAll(List.of(redelivered, enroll("s2", 6, "CS 102")));

        assertThat(other.get()).isEqualTo(Outcome.APPLIED);
        assertThat(outcome(results.get(1))).isEqualTo(Outcome.APPLIED);
        // the other consumer applied it; whatever the serial order, exactly one of the two deliveries is APPLIED
        assertThat(outcome(results.get(0))).as("s1 seq 5, applied by the other consumer first").isEqualTo(Outcome.DUPLICATE);
    }

    @Test
    void a_delete_whose_cas_lost_to_a_concurrent_apply_of_the_same_delete_is_a_duplicate_not_a_second_applied() {
        applier.apply(enroll("s1", 3, "CS 101"));
        applier.apply(enroll("s2", 4, "CS 102"));
        Operation redelivered = leave("s1", 7);
        AtomicReference<Outcome> other = new AtomicReference<>();
        hooks.onFirstFind.set(() -> other.set(applier.apply(redelivered)));

        List<BatchResult> results = listenedApplier.applyAll(List.of(redelivered, enroll("s2", 6, "CS 102")));

        assertThat(other.get()).isEqualTo(Outcome.APPLIED);
        assertThat(outcome(results.get(1))).isEqualTo(Outcome.APPLIED);
        assertThat(outcome(results.get(0))).as("delete s1 seq 7, applied by the other consumer first")
                .isEqualTo(Outcome.DUPLICATE);
    }

    @Test
    void a_delete_whose_document_was_removed_by_hand_between_its_read_and_its_write_applies_to_an_absent_one() {
        applier.apply(enroll("s1", 3, "CS 101"));
        hooks.onFirstFind.set(() -> students.deleteOne(new BsonDocument("_id", new BsonString("s1"))));

        // its compare-and-set misses (the document is gone), and a read finds nothing: a delete of nothing
        List<BatchResult> results = listenedApplier.applyAll(List.of(leave("s1", 7)));

        assertThat(outcome(results.get(0))).isEqualTo(Outcome.APPLIED);
        assertThat(EntityState.of(students.find().first(), Students.SCHEMA)).as("a delete of an absent document")
                .isEqualTo(new dev.orderless.oracle.ReferenceModel(Students.SCHEMA).replay(List.of(leave("s1", 7)))
                        .get("s1"));
    }

    // An op of a slot behind a higher one in the same batch is superseded where the higher one's write matched:
    // that write is guarded on the floor being none of their seqs, so a collision with a delete's seq makes it
    // miss, and a read tells the collision.

    @Test
    void a_follower_whose_seq_is_the_stored_floor_is_a_seq_collision_as_apply_says_in_every_order() {
        applier.apply(leave("s1", 4));   // _floor 4
        Operation colliding = enroll("s1", 4, "CS 101");   // a different op claiming the delete's seq
        Operation later = enroll("s1", 6, "CS 101");

        // apply alone, before or after `later`: seq == _floor is a collision (a floor never changes but by a delete)
        List<BatchResult> results = applier.applyAll(List.of(colliding, later));

        assertThat(outcome(results.get(1))).isEqualTo(Outcome.APPLIED);
        assertThat(outcome(results.get(0))).isEqualTo(Outcome.SEQ_COLLISION);
    }

    // No progress is judged before the limit of attempts, as apply judges it: a write MongoDB will never
    // take is refused (dead-lettered), not given up on (retried forever).

    @Test
    void a_delete_of_a_document_whose_version_has_another_type_is_no_progress_in_a_batch_as_alone_with_one_attempt() {
        GuardedApplier oneAttempt = GuardedApplier.create(students, Students.SCHEMA,
                ApplierOptions.ofDefaults().withMaxAttempts(1));
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonString("x")));

        assertThatThrownBy(() -> oneAttempt.apply(leave("s1", 5))).isInstanceOfSatisfying(CannotApplyException.class,
                e -> assertThat(e.kind()).isEqualTo(CannotApplyException.Kind.NO_PROGRESS));

        List<BatchResult> results = oneAttempt.applyAll(List.of(leave("s1", 5)));
        assertThat(results.get(0)).isInstanceOfSatisfying(BatchResult.Refused.class,
                r -> assertThat(r.reason().kind()).isEqualTo(CannotApplyException.Kind.NO_PROGRESS));
    }

    @Test
    void a_refresh_that_can_never_match_is_no_progress_in_a_batch_as_alone_with_two_attempts() {
        GuardedApplier twoAttempts = GuardedApplier.create(students, Students.SCHEMA,
                ApplierOptions.ofDefaults().withMaxAttempts(2));
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(1))
                .append("classes", new BsonArray(List.of(new BsonDocument("name", new BsonString("CS 101"))
                        .append("seq", new BsonArray(List.of(new BsonInt64(100))))))));

        assertThatThrownBy(() -> twoAttempts.apply(enroll("s1", 9, "CS 101"))).isInstanceOfSatisfying(
                CannotApplyException.class, e -> assertThat(e.kind()).isEqualTo(CannotApplyException.Kind.NO_PROGRESS));

        List<BatchResult> results = twoAttempts.applyAll(List.of(enroll("s1", 9, "CS 101")));
        assertThat(results.get(0)).isInstanceOfSatisfying(BatchResult.Refused.class,
                r -> assertThat(r.reason().kind()).isEqualTo(CannotApplyException.Kind.NO_PROGRESS));
    }

    // A blind first write that misses costs a read, not an attempt: a wrong hint never keeps an op out.

    @Test
    void with_one_attempt_a_wrongly_hinted_op_is_applied_as_apply_alone_applies_it() {
        GuardedApplier oneAttempt = GuardedApplier.create(students, Students.SCHEMA,
                ApplierOptions.ofDefaults().withMaxAttempts(1));
        oneAttempt.apply(enroll("s1", 1, "CS 101"));
        List<Operation> batch = List.of(enroll("s1", 2, "CS 101"),   // hint right: live with a lower seq
                enroll("s1", 3, "CS 102"));                            // hint wrong: not stored at all

        List<BatchResult> first = oneAttempt.applyAll(batch, op -> true);
        List<BatchResult> retried = oneAttempt.applyAll(batch, op -> true);   // a consumer retries a failed op

        assertThat(first.get(0)).as("its refresh matched: it is applied, not 'gave up, not applied'")
                .isInstanceOf(BatchResult.Done.class);
        assertThat(List.of(first.get(1), retried.get(1))).as("apply alone would move it in at once")
                .anyMatch(r -> r instanceof BatchResult.Done d && d.outcome() == Outcome.APPLIED);
    }

    // Whatever waits or follows, the stored state is the oracle's.

    @Test
    void followers_waiting_ops_and_a_delete_of_one_entity_in_one_batch_end_as_the_oracle() {
        List<Operation> history = new ArrayList<>(List.of(
                enroll("s1", 1, "CS 101"), Students.unenroll("s1", 2, "CS 101"), enroll("s1", 3, "CS 101"),
                Students.rename("s1", 4, "Ada"), leave("s1", 5), Students.rename("s1", 6, "Bea"),
                enroll("s1", 7, "CS 102"), Students.unenroll("s1", 8, "CS 101"), leave("s1", 9),
                enroll("s1", 10, "CS 101"), Students.rename("s1", 11, "Cy")));
        List<Operation> batch = new ArrayList<>(history);
        java.util.Collections.reverse(batch);
        batch.addAll(history);

        List<BatchResult> results = applier.applyAll(batch);

        assertThat(results).allMatch(r -> r instanceof BatchResult.Done);
        assertThat(EntityState.readAll(students.find(eq("_id", "s1")), Students.SCHEMA))
                .isEqualTo(new ReferenceModel(Students.SCHEMA).replay(history));
    }
}
