package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.Pause;
import dev.orderless.backends.PausePoint;
import dev.orderless.oracle.ReferenceModel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every point where the applier writes what it decided from a read, with another write forced in between
 * ({@link EmbeddedMongo#pause}): the read held after it ran, or the write decided from it held at the server's
 * door, while a competing consumer's write lands. The guard makes the stale write miss, a new read decides
 * again, and the document ends as the oracle's; each outcome is the one the sequential order gives. One
 * {@code apply} ({@link WriteLoop}) and each round of a batch ({@link BatchApply}).
 */
class ApplyInterleavingsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ReferenceModel ORACLE = new ReferenceModel(Students.SCHEMA);
    private static final AtomicInteger STUDENTS = new AtomicInteger();

    private static EmbeddedMongo mongo;
    private static MongoClient client;
    private static ExecutorService threads;
    private static MongoCollection<BsonDocument> students;
    /** The consumer whose write the test holds, counting its writes that missed in {@link #meters}. */
    private GuardedApplier held;
    private SimpleMeterRegistry meters;
    /** A competing consumer, writing while the other is held. */
    private static GuardedApplier other;
    private String student;

    @BeforeAll
    static void start() {
        mongo = EmbeddedMongo.start();   // a server of its own: a held command holds no other test's connection
        client = MongoClients.create(mongo.connectionString());
        students = Students.collection(client.getDatabase("apply_interleavings"));
        other = GuardedApplier.create(students, Students.SCHEMA);
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        client.close();
        mongo.close();
    }

    @BeforeEach
    void aStudent() {
        student = "student-" + STUDENTS.incrementAndGet();
        meters = new SimpleMeterRegistry();
        held = GuardedApplier.create(students, Students.SCHEMA, ApplierOptions.ofDefaults().withMeters(meters));
    }

    // one apply

    @Test
    void a_delete_whose_read_is_held_while_a_remove_lands_reads_again_and_keeps_the_removes_tombstone() throws Exception {
        List<Operation> before = List.of(Students.enroll(student, 100, "a"), Students.enroll(student, 400, "b"));
        before.forEach(held::apply);
        Operation delete = Students.leave(student, 500);
        Operation remove = Students.unenroll(student, 510, "b");

        // tag::forced-interleaving[]
        Future<Outcome> deleted;
        try (Pause read = mongo.pause(PausePoint.after("find", "students").where(names(student)))) {
            deleted = threads.submit(() -> held.apply(delete));          // a delete reads, then compares and sets
            read.awaitHeld(WAIT);                                        // it read b live, at _v 2
            assertThat(other.apply(remove)).isEqualTo(Outcome.APPLIED);  // another consumer: b removed, _v 3
        }                                                                // the read's reply goes on
        assertThat(deleted.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.APPLIED);
        // end::forced-interleaving[]
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(1);
        assertConverged(before, delete, remove);
    }

    @Test
    void a_delete_whose_compare_and_set_is_held_while_an_add_above_it_lands_reads_again_and_keeps_the_add() throws Exception {
        List<Operation> before = List.of(Students.enroll(student, 100, "a"));
        before.forEach(held::apply);
        Operation delete = Students.leave(student, 500);
        Operation add = Students.enroll(student, 600, "c");

        Future<Outcome> deleted;
        try (Pause cas = mongo.pause(PausePoint.before("update", "students").where(names(student)).where(filterHas("_v")))) {
            deleted = threads.submit(() -> held.apply(delete));
            cas.awaitHeld(WAIT);                                         // decided from _v 1
            assertThat(other.apply(add)).isEqualTo(Outcome.APPLIED);     // _v 2
        }
        assertThat(deleted.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(1);
        assertConverged(before, delete, add);
    }

    @Test
    void an_add_whose_refresh_is_held_while_a_remove_above_it_lands_is_superseded() throws Exception {
        List<Operation> before = List.of(Students.enroll(student, 200, "b", "old title"));
        before.forEach(held::apply);
        Operation add = Students.enroll(student, 300, "b", "new title");   // b live below it: a refresh in place
        Operation remove = Students.unenroll(student, 400, "b");

        Future<Outcome> added;
        try (Pause refresh = mongo.pause(PausePoint.before("update", "students").where(names(student))
                .where(updateHas("classes.$")))) {
            added = threads.submit(() -> held.apply(add));
            refresh.awaitHeld(WAIT);                                     // decided from b@200 live
            assertThat(other.apply(remove)).isEqualTo(Outcome.APPLIED);
        }
        assertThat(added.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.SUPERSEDED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(2);
        assertConverged(before, add, remove);
    }

    // a batch, round by round

    @Test
    void a_batch_whose_blind_first_round_is_held_while_a_remove_above_its_add_lands_finds_the_add_superseded() throws Exception {
        Operation add = Students.enroll(student, 300, "b");
        Operation rename = Students.rename(student, 301, "Ada");
        Operation remove = Students.unenroll(student, 400, "b");

        Future<List<BatchResult>> batch;
        try (Pause bulk = mongo.pause(PausePoint.before("update", "students").where(names(student)))) {
            batch = threads.submit(() -> held.applyAll(List.of(add, rename)));
            bulk.awaitHeld(WAIT);                                        // both blind writes, unsent
            assertThat(other.apply(remove)).isEqualTo(Outcome.APPLIED);
        }
        assertThat(outcomes(batch)).containsExactly(Outcome.SUPERSEDED, Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed and were read: none, the add's probe"
                + " tells it superseded").isZero();
        assertConverged(List.of(), add, rename, remove);
    }

    @Test
    void a_batch_whose_second_round_read_is_held_while_an_add_lands_decides_again_in_a_third_round() throws Exception {
        List<Operation> before = List.of(Students.enroll(student, 100, "a"));
        before.forEach(held::apply);
        Operation delete = Students.leave(student, 500);   // a delete reads first: its read is round two's
        Operation rename = Students.rename(student, 450, "Ada");
        Operation add = Students.enroll(student, 600, "c");

        Future<List<BatchResult>> batch;
        try (Pause read = mongo.pause(PausePoint.after("find", "students").where(names(student)))) {
            batch = threads.submit(() -> held.applyAll(List.of(rename, delete)));
            read.awaitHeld(WAIT);                                        // round two's read: _v 2
            assertThat(other.apply(add)).isEqualTo(Outcome.APPLIED);     // _v 3
        }
        assertThat(outcomes(batch)).containsExactly(Outcome.APPLIED, Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(1);
        assertConverged(before, rename, delete, add);
    }

    @Test
    void a_batch_whose_compare_and_set_is_held_while_a_remove_lands_decides_again_in_a_third_round() throws Exception {
        List<Operation> before = List.of(Students.enroll(student, 100, "a"), Students.enroll(student, 200, "c"));
        before.forEach(held::apply);
        Operation delete = Students.leave(student, 500);
        Operation remove = Students.unenroll(student, 700, "c");

        Future<List<BatchResult>> batch;
        try (Pause cas = mongo.pause(PausePoint.before("update", "students").where(names(student)).where(filterHas("_v")))) {
            batch = threads.submit(() -> held.applyAll(List.of(delete)));
            cas.awaitHeld(WAIT);                                         // round two's write, decided from _v 2
            assertThat(other.apply(remove)).isEqualTo(Outcome.APPLIED);
        }
        assertThat(outcomes(batch)).containsExactly(Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(1);
        assertConverged(before, delete, remove);
    }

    @Test
    void a_batch_whose_blind_refresh_is_held_while_a_remove_lands_finds_its_add_superseded() throws Exception {
        List<Operation> before = List.of(Students.enroll(student, 200, "b", "old title"));
        before.forEach(held::apply);
        Operation add = Students.enroll(student, 300, "b", "new title");   // b live below it: the refresh would match
        Operation rename = Students.rename(student, 310, "Ada");
        Operation remove = Students.unenroll(student, 400, "b");

        Future<List<BatchResult>> batch;
        try (Pause blind = mongo.pause(PausePoint.before("update", "students").where(names(student))
                .where(updateHas("classes.$")))) {
            batch = threads.submit(() -> held.applyAll(List.of(add, rename)));
            blind.awaitHeld(WAIT);                                       // round one: the move and the refresh
            assertThat(other.apply(remove)).isEqualTo(Outcome.APPLIED);
        }
        assertThat(outcomes(batch)).containsExactly(Outcome.SUPERSEDED, Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed and were read: none, the add's probe"
                + " tells it superseded").isZero();
        assertConverged(before, add, rename, remove);
    }

    @Test
    void a_batch_whose_blind_write_is_held_while_a_delete_at_its_followers_seq_lands_reads_the_collision()
            throws Exception {
        List<Operation> before = List.of(Students.enroll(student, 100, "b"));
        before.forEach(held::apply);
        Operation add = Students.enroll(student, 300, "b");
        Operation follower = Students.unenroll(student, 250, "b");   // superseded by the add, if nothing collides
        Operation delete = Students.leave(student, 250);             // a different op with the follower's seq

        Future<List<BatchResult>> batch;
        try (Pause blind = mongo.pause(PausePoint.before("update", "students").where(names(student)))) {
            batch = threads.submit(() -> held.applyAll(List.of(follower, add)));
            blind.awaitHeld(WAIT);                                       // the add's writes, guarded on _floor != 250
            assertThat(other.apply(delete)).isEqualTo(Outcome.APPLIED);  // _floor 250
        }
        assertThat(outcomes(batch)).containsExactly(Outcome.SEQ_COLLISION, Outcome.APPLIED);
        assertConverged(before, delete, add);
    }

    @Test
    void a_batch_whose_read_decided_refresh_is_held_while_a_remove_lands_finds_its_add_superseded() throws Exception {
        // b live at 260 above a delete at 250; the follower's seq is the floor, so the blind writes miss and a read
        // decides: the follower collides, the add refreshes b in place
        List<Operation> before = List.of(Students.leave(student, 250), Students.enroll(student, 260, "b", "old title"));
        before.forEach(held::apply);
        Operation add = Students.enroll(student, 300, "b", "new title");
        Operation follower = Students.unenroll(student, 250, "b");
        Operation remove = Students.unenroll(student, 400, "b");

        Future<List<BatchResult>> batch;
        try (Pause refresh = mongo.pause(PausePoint.before("update", "students").where(names(student))
                .where(updateHas("classes.$")).where(statements(1)))) {
            batch = threads.submit(() -> held.applyAll(List.of(add, follower)));
            refresh.awaitHeld(WAIT);                                     // round two: the refresh alone
            assertThat(other.apply(remove)).isEqualTo(Outcome.APPLIED);
        }
        assertThat(outcomes(batch)).containsExactly(Outcome.SUPERSEDED, Outcome.SEQ_COLLISION);
        assertThat(missed()).as("writes of the held consumer that missed: round one's, the refresh").isEqualTo(2);
        assertConverged(before, add, remove);
    }

    // a counter's decision points: its blind write (no read), and a delete's compare-and-set beside it

    @Test
    void a_delete_whose_compare_and_set_is_held_while_an_increment_above_it_lands_reads_again_and_keeps_it()
            throws Exception {
        List<Operation> before = List.of(Students.credit(student, 100, 5));
        before.forEach(held::apply);
        Operation delete = Students.leave(student, 500);
        Operation increment = Students.credit(student, 600, 3);

        Future<Outcome> deleted;
        try (Pause cas = mongo.pause(PausePoint.before("update", "students").where(names(student)).where(filterHas("_v")))) {
            deleted = threads.submit(() -> held.apply(delete));
            cas.awaitHeld(WAIT);                                           // decided from _v 1: credits 5, one increment
            assertThat(other.apply(increment)).isEqualTo(Outcome.APPLIED); // credits 8, _v 2
        }
        assertThat(deleted.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(1);
        assertConverged(before, delete, increment);                       // credits 3: the one above the delete
    }

    @Test
    void an_increment_whose_blind_write_is_held_while_a_delete_above_it_lands_is_superseded_and_counts_nothing()
            throws Exception {
        List<Operation> before = List.of(Students.credit(student, 100, 5));
        before.forEach(held::apply);
        Operation increment = Students.credit(student, 400, 3);
        Operation delete = Students.leave(student, 500);

        Future<Outcome> incremented;
        try (Pause blind = mongo.pause(PausePoint.before("update", "students").where(names(student))
                .where(updateHas("_inc.credits")))) {
            incremented = threads.submit(() -> held.apply(increment));
            blind.awaitHeld(WAIT);                                        // guarded on _floor below 400
            assertThat(other.apply(delete)).isEqualTo(Outcome.APPLIED);   // _floor 500: the counter cleared
        }
        assertThat(incremented.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.SUPERSEDED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(1);
        assertConverged(before, increment, delete);
    }

    @Test
    void the_same_increment_from_two_consumers_at_once_is_counted_once() throws Exception {
        Operation increment = Students.credit(student, 100, 5);

        Future<Outcome> first;
        try (Pause blind = mongo.pause(PausePoint.before("update", "students").where(names(student))
                .where(updateHas("_inc.credits")))) {
            first = threads.submit(() -> held.apply(increment));
            blind.awaitHeld(WAIT);
            assertThat(other.apply(increment)).isEqualTo(Outcome.APPLIED);   // the redelivery, on another consumer
        }
        assertThat(first.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.DUPLICATE);
        assertConverged(List.of(), increment);
    }

    // a ranked register's: its compare-and-set after a read (an assignment that does not outrank the winner)

    @Test
    void a_ranked_assignment_whose_compare_and_set_is_held_while_a_delete_below_it_lands_reads_again_and_wins()
            throws Exception {
        List<Operation> before = List.of(Students.stage(student, 100, "withdrawn"));
        before.forEach(held::apply);
        Operation enrolled = Students.stage(student, 300, "enrolled");   // outranked by withdrawn: kept as a candidate
        Operation delete = Students.leave(student, 200);

        Future<Outcome> assigned;
        try (Pause cas = mongo.pause(PausePoint.before("update", "students").where(names(student)).where(filterHas("_v"))
                .where(updateHas("_ranked.stage")))) {
            assigned = threads.submit(() -> held.apply(enrolled));
            cas.awaitHeld(WAIT);                                         // decided from _v 1: withdrawn wins
            assertThat(other.apply(delete)).isEqualTo(Outcome.APPLIED);  // withdrawn gone, _v 2
        }
        assertThat(assigned.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(2);   // the blind one, the CAS
        assertConverged(before, delete, enrolled);                                         // enrolled, at 300
    }

    @Test
    void a_delete_whose_compare_and_set_is_held_while_a_ranked_assignment_above_it_lands_keeps_it_as_the_winner()
            throws Exception {
        List<Operation> before = List.of(Students.stage(student, 100, "withdrawn"));
        before.forEach(held::apply);
        Operation delete = Students.leave(student, 200);
        Operation applied = Students.stage(student, 300, "applied");   // loses to withdrawn, until the delete

        Future<Outcome> deleted;
        try (Pause cas = mongo.pause(PausePoint.before("update", "students").where(names(student)).where(filterHas("_v"))
                .where(updateHas("_floor")))) {
            deleted = threads.submit(() -> held.apply(delete));
            cas.awaitHeld(WAIT);
            assertThat(other.apply(applied)).isEqualTo(Outcome.APPLIED);   // a candidate beside withdrawn, _v 2
        }
        assertThat(deleted.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.APPLIED);
        assertThat(missed()).as("writes of the held consumer that missed").isEqualTo(1);
        assertConverged(before, delete, applied);                          // applied, at 300
    }

    private long missed() {
        return (long) meters.counter("orderless.apply.retries", "collection", "students").count();
    }

    private void assertConverged(List<Operation> before, Operation... after) {
        List<Operation> history = new java.util.ArrayList<>(before);
        history.addAll(List.of(after));
        BsonDocument stored = students.find(new BsonDocument("_id", new BsonString(student))).first();
        assertThat(EntityState.of(stored, Students.SCHEMA)).isEqualTo(ORACLE.replay(history).get(student));
    }

    private static List<Outcome> outcomes(Future<List<BatchResult>> batch) throws Exception {
        return batch.get(WAIT.toSeconds(), TimeUnit.SECONDS).stream()
                .map(result -> ((BatchResult.Done) result).outcome()).toList();
    }

    private static Predicate<BsonDocument> names(String student) {
        return command -> command.toJson().contains("\"" + student + "\"");
    }

    /** An update command one of whose statements filters on {@code field}. */
    private static Predicate<BsonDocument> filterHas(String field) {
        return command -> command.getArray("updates").stream()
                .anyMatch(statement -> statement.asDocument().getDocument("q").toJson().contains("\"" + field + "\""));
    }

    /** An update command one of whose statements writes {@code path}. */
    /** An update command of {@code n} statements. */
    private static Predicate<BsonDocument> statements(int n) {
        return command -> command.getArray("updates").size() == n;
    }

    private static Predicate<BsonDocument> updateHas(String path) {
        return command -> command.getArray("updates").stream()
                .anyMatch(statement -> statement.asDocument().toJson().contains("\"" + path + "\""));
    }
}
