package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static dev.orderless.apply.Students.enroll;
import static dev.orderless.apply.Students.rename;
import static dev.orderless.apply.Students.unenroll;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.CannotApplyException;
import dev.orderless.testing.MongoExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A batch's blind round settles an op from its probe ("a read would find it superseded", {@link
 * WritePlan#supersededWhen()}) without reading: so the probe must agree with the read on every document, also one
 * another program wrote with odd values (a seq or floor that is an array, a double, a string, missing). Each case:
 * the same op on the same document, once by {@code applyAll} and once by {@code apply} on a copy; the outcomes
 * and the documents after are the same.
 */
@ExtendWith(MongoExtension.class)
class BatchProbesTest {
    /** Documents of s1, each with what makes it a case. */
    private static final List<String> DOCUMENTS = List.of(
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 3}], _seq: {name: 3}, name: 'Ada'}",
            "{_v: 1, _floor: 20, classes: [{name: 'CS 101', seq: 30}], _seq: {name: 30}, name: 'Ada'}",
            "{_v: 1, _floor: 9, classes: [{name: 'CS 101', seq: 12}], _seq: {name: 12}, name: 'Ada'}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 12}], _seq: {name: 12}, name: 'Ada'}",
            "{_v: 1, _floor: 0, deleted_classes: [{name: 'CS 101', seq: 12}]}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 3}], deleted_classes: [{name: 'CS 101', seq: 12}]}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 12}], deleted_classes: [{name: 'CS 101', seq: 3}]}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 9}], _seq: {name: 9}, name: 'Ada'}",
            "{_v: 1, _floor: [100], classes: [{name: 'CS 101', seq: [100]}], _seq: {name: [100]}, name: 'Ada'}",
            "{_v: 1, _floor: 9.5, classes: [{name: 'CS 101', seq: 9.5}], _seq: {name: 9.5}, name: 'Ada'}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 12.5}], _seq: {name: 12.5}, name: 'Ada'}",
            "{_v: 1, _floor: '100', classes: [{name: 'CS 101', seq: '100'}], _seq: {name: '100'}, name: 'Ada'}",
            "{_v: 1, classes: [{name: 'CS 101'}], name: 'Ada'}",
            "{_v: 1, _floor: 0, classes: ['CS 101'], _seq: {name: 3}, name: 'Ada'}",
            "{_v: 1, _floor: {$numberDecimal: '100'}, classes: [{name: 'CS 101', seq: {$numberDecimal: '100'}}],"
                    + " _seq: {name: {$numberDecimal: '100'}}, name: 'Ada'}",
            "{_v: 1, _floor: Infinity, classes: [], name: 'Ada'}",
            "{_v: 1, _floor: NaN, classes: [{name: 'CS 101', seq: NaN}], _seq: {name: NaN}, name: 'Ada'}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 10.0}], _seq: {name: 10.0}, name: 'Ada'}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 30}, {name: 'CS 101', seq: 3}]}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 9}, {name: 'CS 101', seq: 3}]}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 3}, {name: 'CS 101', seq: 9}]}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 3}, 'CS 101']}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 30}, 'CS 101'], _seq: {name: 3}}",
            "{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: 3}], deleted_classes: ['CS 101']}",
            "{_v: 1, _floor: 0, _gcFloor: 20, classes: [], _seq: {name: 3}}",
            "{_v: 1, _floor: {$numberLong: '12'}, classes: [{name: 'CS 101', seq: {$numberLong: '15'}}],"
                    + " _seq: {name: {$numberLong: '15'}}, name: 'Ada'}");

    /** Ops on s1 at seq 9, each of a kind a probe is sent for. */
    private static final List<Operation> OPS = List.of(enroll("s1", 9, "CS 101"), unenroll("s1", 9, "CS 101"),
            rename("s1", 9, "Grace"));

    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;

    @BeforeEach
    void setUp(MongoDatabase db) {
        students = Students.collection(db);
        applier = GuardedApplier.create(students, Students.SCHEMA, ApplierOptions.ofDefaults().withMaxAttempts(2)
                .withClock(java.time.Clock.fixed(java.time.Instant.parse("2026-11-27T12:00:00Z"), java.time.ZoneOffset.UTC)));
    }

    @Test
    void on_every_document_a_batch_of_one_op_ends_as_apply_alone_ends() {
        List<String> disagreements = new ArrayList<>();
        for (String json : DOCUMENTS) {
            for (Operation op : OPS) {
                disagreement(json, List.of(op)).ifPresent(disagreements::add);
            }
        }
        assertThat(disagreements).as(String.join("\n", disagreements)).isEmpty();
    }

    /** A writer and a lower seq of its slot that follows it, on floors a read takes otherwise than a server. */
    @Test
    void a_follower_settled_unread_ends_as_some_serial_order_of_apply_ends() {
        List<String> floors = List.of("0", "5", "5.5", "5.0", "[5]", "{$numberDecimal: '5.5'}", "NaN", "4.9");
        List<String> disagreements = new ArrayList<>();
        for (String floor : floors) {
            disagreement("{_v: 1, _floor: " + floor + ", _seq: {name: 3}, name: 'Ada'}",
                    List.of(rename("s1", 10, "Grace"), rename("s1", 5, "Lin"))).ifPresent(disagreements::add);
            disagreement("{_v: 1, _floor: " + floor + ", _seq: {name: 30}, name: 'Ada'}",
                    List.of(rename("s1", 10, "Grace"), rename("s1", 5, "Lin"))).ifPresent(disagreements::add);
            disagreement("{_v: 1, _floor: " + floor + ", classes: [{name: 'CS 101', seq: 3}]}",
                    List.of(enroll("s1", 10, "CS 101"), unenroll("s1", 5, "CS 101"))).ifPresent(disagreements::add);
        }
        assertThat(disagreements).as(String.join("\n", disagreements)).isEmpty();
    }

    /** The largest seq: nothing is above it, so no probe can tell it superseded. */
    @Test
    void an_op_at_the_largest_seq_is_judged_by_a_read() {
        long max = Long.MAX_VALUE;
        List<String> disagreements = new ArrayList<>();
        disagreement("{_v: 1, _floor: 0, _seq: {name: " + max + "}, name: 'Grace'}", List.of(rename("s1", max, "Grace")))
                .ifPresent(disagreements::add);
        disagreement("{_v: 1, _floor: 0, _seq: {name: " + max + "}, name: 'Ada'}", List.of(rename("s1", max, "Grace")))
                .ifPresent(disagreements::add);
        disagreement("{_v: 1, _floor: 0, classes: [{name: 'CS 101', seq: " + max + "}]}",
                List.of(enroll("s1", max, "CS 101"))).ifPresent(disagreements::add);
        disagreement("{_v: 1, _floor: " + max + ", _seq: {name: 3}}", List.of(rename("s1", max, "Grace")))
                .ifPresent(disagreements::add);
        assertThat(disagreements).as(String.join("\n", disagreements)).isEmpty();
    }

    /**
     * Why {@code batch} on {@code json} ends as no serial order of {@code apply} ends (outcomes and document), if
     * it does; every order of a batch of one or two ops is tried.
     */
    private Optional<String> disagreement(String json, List<Operation> batch) {
        reset(json);
        List<String> batched = applier.applyAll(batch).stream().map(BatchProbesTest::describe).toList();
        BsonDocument afterBatch = students.find(eq("_id", "s1")).first();
        StringBuilder why = new StringBuilder(batch + " on " + json + ": batch " + batched + " -> " + afterBatch.toJson());
        List<List<Integer>> orders = batch.size() == 1 ? List.of(List.of(0)) : List.of(List.of(0, 1), List.of(1, 0));
        for (List<Integer> order : orders) {
            reset(json);
            String[] alone = new String[batch.size()];
            for (int i : order) {
                try {
                    alone[i] = applier.apply(batch.get(i)).name();
                } catch (CannotApplyException e) {
                    alone[i] = "refused " + e.kind();
                }
            }
            BsonDocument afterAlone = students.find(eq("_id", "s1")).first();
            if (List.of(alone).equals(batched) && afterAlone.equals(afterBatch)) {
                return Optional.empty();
            }
            why.append("; in order ").append(order).append(' ').append(List.of(alone)).append(" -> ").append(afterAlone.toJson());
        }
        return Optional.of(why.toString());
    }

    private void reset(String json) {
        students.deleteMany(new BsonDocument());
        students.insertOne(BsonDocument.parse(json).append("_id", new org.bson.BsonString("s1")));
    }

    @Test
    void a_probe_that_matches_writes_nothing_and_one_that_misses_inserts_nothing() {
        students.insertOne(BsonDocument.parse(DOCUMENTS.get(1)).append("_id", new org.bson.BsonString("s1")));
        BsonDocument before = students.find(eq("_id", "s1")).first();

        List<BatchResult> results = applier.applyAll(List.of(rename("s1", 9, "Grace"), rename("s2", 9, "Lin")));

        assertThat(results).map(BatchProbesTest::describe).containsExactly("SUPERSEDED", "APPLIED");
        assertThat(students.find(eq("_id", "s1")).first()).isEqualTo(before);
        assertThat(students.countDocuments()).as("s1 and s2, nothing else").isEqualTo(2);
    }

    // A probe, like every write sent before a read, judges the op's own fields: a plain value in the op's own set
    // keeps it from matching (the read refuses the document), one in another field does not (the next read of the
    // document refuses it, as the blind write of an op of another field applies to it).
    @Test
    void a_probe_judges_the_fields_of_its_op_as_a_blind_write_does() {
        students.insertOne(BsonDocument.parse("{_id: 's1', _v: 1, _floor: 0, classes: ['CS 101'], _seq: {name: 30},"
                + " name: 'Ada'}"));
        students.insertOne(BsonDocument.parse("{_id: 's2', _v: 1, _floor: 0, classes: ['CS 101'], _seq: {name: 3},"
                + " name: 'Ada'}"));
        students.insertOne(BsonDocument.parse("{_id: 's3', _v: 1, _floor: 0, classes: 'CS 101',"
                + " deleted_classes: [{name: 'CS 101', seq: 30}]}"));

        List<BatchResult> results = applier.applyAll(List.of(rename("s1", 9, "Grace"), rename("s2", 9, "Lin"),
                enroll("s3", 9, "CS 101")));

        assertThat(results).map(BatchProbesTest::describe).containsExactly("SUPERSEDED", "APPLIED",
                "refused NO_PROGRESS");
    }

    private static String describe(BatchResult result) {
        if (result instanceof BatchResult.Done done) {
            return done.outcome().name();
        }
        if (result instanceof BatchResult.Refused refused) {
            return "refused " + refused.reason().kind();
        }
        return "failed " + ((BatchResult.Failed) result).error();
    }
}
