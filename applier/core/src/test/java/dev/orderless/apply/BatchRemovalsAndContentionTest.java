package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static dev.orderless.apply.Students.credit;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.leave;
import static dev.orderless.apply.Students.stage;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
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
 * A batch where a document is removed by hand between a round's read and its write, where one delivery reaches two
 * consumers, and where a batch's own writes contend (from an adversarial review of the refreshes sent as upserts):
 * each op's outcome and the document are what apply alone gives in some serial order.
 */
@ExtendWith(MongoExtension.class)
class BatchRemovalsAndContentionTest {
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;
    private final FirstCommandHooks hooks = new FirstCommandHooks();
    private MongoClient listened;
    private MongoDatabase listenedDb;

    @BeforeEach
    void setUp(MongoBackend backend, MongoDatabase db) {
        students = Students.collection(db);
        applier = GuardedApplier.create(students, Students.SCHEMA);
        listened = hooks.client(backend);
        listenedDb = listened.getDatabase(db.getName());
    }

    @AfterEach
    void tearDown() {
        listened.close();
    }

    private GuardedApplier listenedApplier(ApplierOptions options) {
        return GuardedApplier.create(listenedDb.getCollection("students", BsonDocument.class), Students.SCHEMA, options);
    }

    private static Outcome outcome(BatchResult r) {
        assertThat(r).isInstanceOf(BatchResult.Done.class);
        return ((BatchResult.Done) r).outcome();
    }

    private EntityState stored(String id) {
        return EntityState.of(students.find(eq("_id", id)).first(), Students.SCHEMA);
    }

    private static EntityState reference(Operation... ops) {
        return new ReferenceModel(Students.SCHEMA).replay(List.of(ops)).get(ops[0].entity());
    }

    // 1. A ranked compare-and-set sent as an upsert, its document removed between its read and its write: it
    //    inserts the candidates it read from the removed document (the old winner comes back). apply alone: CAS
    //    misses, read says absent, ranked-wins inserts only this assignment.
    @Test
    void ranked_cas_upsert_on_a_removed_document_resurrects_the_old_winner() {
        applier.apply(stage("s1", 3, "graduated"));
        hooks.onFirstFind.set(() -> students.deleteOne(eq("_id", "s1")));

        List<BatchResult> results = listenedApplier(ApplierOptions.ofDefaults()).applyAll(List.of(stage("s1", 5, "enrolled")));

        assertThat(outcome(results.get(0))).isEqualTo(Outcome.APPLIED);
        assertThat(students.find(eq("_id", "s1")).first().getString("stage").getValue())
                .as("serially: the op applied to an absent document").isEqualTo("enrolled");
        assertThat(stored("s1")).isEqualTo(reference(stage("s1", 5, "enrolled")));
    }

    // 2. The pinned claim "a compare-and-set whose document was removed by hand inserts its op applied to an absent
    //    document" is false as soon as the removed document held counter increments or ranked candidates above the
    //    delete's seq: the delete's update $sets what it kept from the read document.
    @Test
    void delete_cas_upsert_on_a_removed_document_resurrects_counter_and_ranked_state_read_from_it() {
        applier.apply(credit("s1", 3, 1));
        applier.apply(credit("s1", 9, 10));
        applier.apply(stage("s1", 2, "graduated"));
        applier.apply(stage("s1", 8, "applied"));
        hooks.onFirstFind.set(() -> students.deleteOne(eq("_id", "s1")));

        List<BatchResult> results = listenedApplier(ApplierOptions.ofDefaults()).applyAll(List.of(leave("s1", 7)));

        assertThat(outcome(results.get(0))).isEqualTo(Outcome.APPLIED);
        BsonDocument doc = students.find(eq("_id", "s1")).first();
        assertThat(doc.containsKey("credits")).as("credits resurrected: " + doc).isFalse();
        assertThat(doc.containsKey("stage")).as("stage resurrected: " + doc).isFalse();
        assertThat(stored("s1")).isEqualTo(reference(leave("s1", 7)));
    }

    // 3. A heal (positional, both arrays hold the element) sent as an upsert that misses on a document that
    //    moved on: its own error, nothing inserted, and the op settles as apply would (superseded). The batch's
    //    blind refresh is heal-shaped, so the other write lands just before it.
    @Test
    void heal_upsert_that_misses_inserts_nothing_and_is_superseded() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(1))
                .append("classes", new BsonArray(List.of(new BsonDocument("name", new BsonString("CS 101"))
                        .append("seq", new BsonInt64(3)))))
                .append("deleted_classes", new BsonArray(List.of(new BsonDocument("name", new BsonString("CS 101"))
                        .append("seq", new BsonInt64(2))))));
        hooks.beforeFirstUpdate.set(() -> students.updateOne(eq("_id", "s1"), com.mongodb.client.model.Updates.combine(
                com.mongodb.client.model.Updates.set("classes.0.seq", new BsonInt64(9)),
                com.mongodb.client.model.Updates.inc("_v", 1L))));

        List<BatchResult> results = listenedApplier(ApplierOptions.ofDefaults()).applyAll(List.of(enroll("s1", 5, "CS 101")));

        assertThat(students.countDocuments()).as("nothing inserted: " + students.find().into(new ArrayList<>()))
                .isEqualTo(1);
        assertThat(outcome(results.get(0))).isEqualTo(Outcome.SUPERSEDED);
    }

    // 4. A heal sent as an upsert whose document was removed by hand: nothing bogus inserted (no field named
    //    after the position, no foreign _id). Removed just before the blind bulk write: the move beside the heal
    //    inserts s1 afresh.
    @Test
    void heal_upsert_on_a_removed_document_inserts_nothing_bogus() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("_v", new BsonInt64(1))
                .append("classes", new BsonArray(List.of(new BsonDocument("name", new BsonString("CS 101"))
                        .append("seq", new BsonInt64(3)))))
                .append("deleted_classes", new BsonArray(List.of(new BsonDocument("name", new BsonString("CS 101"))
                        .append("seq", new BsonInt64(2))))));
        hooks.beforeFirstUpdate.set(() -> students.deleteOne(eq("_id", "s1")));

        List<BatchResult> results = listenedApplier(ApplierOptions.ofDefaults()).applyAll(List.of(enroll("s1", 5, "CS 101")));

        List<BsonDocument> all = students.find().into(new ArrayList<>());
        assertThat(all).as("only s1, moved in afresh: " + all).hasSize(1);
        assertThat(all.get(0).get("_id")).isEqualTo(new BsonString("s1"));
        assertThat(outcome(results.get(0))).isEqualTo(Outcome.APPLIED);
        assertThat(stored("s1")).isEqualTo(reference(enroll("s1", 5, "CS 101")));
    }

    // 5. Self-contention: several out-of-order ranked assignments to one register in one batch each go by CAS
    //    on _v (each a slot of its own), all chosen from the same read: one per round matches, and the others'
    //    misses (against writes of their own batch) count as attempts. Alone, with the same maxAttempts, each
    //    applies. (Same counting before 805fae3; still a wrong give-up.)
    @Test
    void out_of_order_ranked_assignments_in_one_batch_are_not_given_up_on_for_contending_with_each_other() {
        applier.apply(stage("s1", 1, "withdrawn"));   // outranks all below: every blind ranked-wins misses
        ApplierOptions two = ApplierOptions.ofDefaults().withMaxAttempts(2);
        List<Operation> batch = List.of(stage("s1", 2, "applied"), stage("s1", 3, "enrolled"),
                stage("s1", 4, "graduated"));

        List<BatchResult> results = listenedApplier(two).applyAll(batch);

        assertThat(results).as("alone, with 2 attempts, each is applied: " + results)
                .allMatch(r -> r instanceof BatchResult.Done d && d.outcome() == Outcome.APPLIED);
    }

    // 6. One delivery applied twice: a hinted refresh in the blind round stays a counted plain update; when
    //    another of the round's refreshes matched, one found holding its very entry is reported APPLIED, although
    //    another consumer applied that very delivery first (its refresh matched nothing).
    @Test
    void a_blind_hinted_refresh_that_lost_to_another_consumer_is_a_duplicate_not_a_second_applied() {
        applier.apply(enroll("s1", 3, "CS 101"));
        applier.apply(enroll("s2", 4, "CS 102"));
        Operation redelivered = enroll("s1", 5, "CS 101");
        AtomicReference<Outcome> other = new AtomicReference<>();
        hooks.beforeFirstUpdate.set(() -> other.set(applier.apply(redelivered)));

        List<BatchResult> results = listenedApplier(ApplierOptions.ofDefaults())
                .applyAll(List.of(redelivered, enroll("s2", 6, "CS 102")), op -> true);

        assertThat(other.get()).isEqualTo(Outcome.APPLIED);
        assertThat(outcome(results.get(1))).isEqualTo(Outcome.APPLIED);
        assertThat(outcome(results.get(0))).as("applied by the other consumer first").isEqualTo(Outcome.DUPLICATE);
    }

    // 7. The inserted document continues the removed one's _v (read _v + 1), so a compare-and-set another
    //    consumer chose from the removed document at that version matches the inserted one: a delete at seq 9
    //    computed from a document that no longer exists erases an assignment at seq 12 reported APPLIED.
    //    Consumer C is driven step by step as apply drives a delete (read, decide, compare-and-set).
    @Test
    void a_stale_cas_of_another_consumer_matches_the_document_the_upsert_inserted_with_a_reused_version() {
        applier.apply(stage("s1", 2, "graduated"));          // _v 1: every lower-ranked assignment goes by CAS
        Operation delete = leave("s1", 9);
        AtomicReference<WritePlan.Write> cWrite = new AtomicReference<>();
        hooks.onFirstFind.set(() -> {                              // B read s1 at _v 1 and chose its ranked CAS
            applier.apply(enroll("s1", 4, "CS 102"));        // _v 2
            BsonDocument read = students.find(eq("_id", "s1")).first();   // consumer C reads _v 2 ...
            WritePlan.Step step = applier.loop().decide(delete, applier.plan(delete), read);
            cWrite.set(((WritePlan.Step.Next) step).write());              // ... and chooses its CAS on _v 2
            students.deleteOne(eq("_id", "s1"));             // removed by hand
        });

        List<BatchResult> results = listenedApplier(ApplierOptions.ofDefaults())
                .applyAll(List.of(stage("s1", 12, "applied")));
        assertThat(outcome(results.get(0))).isEqualTo(Outcome.APPLIED);
        long cMatched = students.updateOne(cWrite.get().filter(), cWrite.get().update()).getMatchedCount();

        BsonDocument doc = students.find(eq("_id", "s1")).first();
        assertThat(cMatched).as("C's CAS was chosen from a document that no longer exists: " + doc).isZero();
        assertThat(doc.get("stage")).as("stage@12 APPLIED, a delete@9 cannot erase it: " + doc)
                .isEqualTo(new BsonString("applied"));
    }
}
