package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.CannotApplyException;
import dev.orderless.InvalidInputException;
import dev.orderless.UnknownFieldException;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Counters: the value is the sum of the deltas of the increments above the last delete, each seq once, in any
 * order; it is stored as a plain number; compaction keeps the document bounded and the horizon honest.
 */
@ExtendWith(MongoExtension.class)
class CountersTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().set(SetField.of("classes", "name"))
            .register("name").counter("credits").build();
    private static final ReferenceModel ORACLE = new ReferenceModel(SCHEMA);
    private static final Duration GRACE = Duration.ofHours(1);

    private final ManualClock clock = new ManualClock();
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;
    private TombstoneCompactor compactor;

    @BeforeEach
    void setUp(MongoDatabase db) {
        students = db.getCollection("counting_students", BsonDocument.class);
        ApplierOptions options = ApplierOptions.ofDefaults().withClock(clock);
        applier = GuardedApplier.create(students, SCHEMA, options);
        compactor = TombstoneCompactor.create(students, SCHEMA, GRACE, options);
    }

    private static Operation credits(long seq, long delta) {
        return Operation.increment("s1", seq, "credits", delta);
    }

    @Test
    void increments_in_any_order_with_duplicates_sum_each_seq_once_and_a_plain_query_reads_the_number() {
        List<Operation> history = List.of(credits(1, 5), credits(2, -2), credits(3, 4), credits(4, 10));
        List<Operation> delivered = new ArrayList<>(history);
        delivered.addAll(history.subList(0, 2));
        Collections.shuffle(delivered, new Random(7));

        List<Outcome> outcomes = delivered.stream().map(applier::apply).toList();

        assertThat(outcomes).filteredOn(o -> o == Outcome.APPLIED).hasSize(4);
        assertThat(outcomes).filteredOn(o -> o == Outcome.DUPLICATE).hasSize(2);
        assertThat(students.find(eq("_id", "s1")).first().getInt64("credits").getValue())
                .as("a reader needs no library: the value is a number field").isEqualTo(17);
        assertThat(state()).isEqualTo(ORACLE.replay(history).get("s1"));
    }

    @Test
    void the_same_seq_with_another_delta_is_a_seq_collision_and_counts_nothing() {
        applier.apply(credits(1, 5));

        assertThat(applier.apply(credits(1, 6))).isEqualTo(Outcome.SEQ_COLLISION);
        assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(5L)));
    }

    @Test
    void a_delete_keeps_exactly_the_increments_above_it_whichever_arrives_first() {
        List<Operation> history = List.of(credits(1, 5), credits(2, 3), Operation.delete("s1", 3), credits(4, 7),
                credits(5, -1));
        for (List<Operation> order : List.of(history, reversed(history))) {
            students.deleteMany(new BsonDocument());
            order.forEach(applier::apply);

            assertThat(state()).as("in the order %s", order).isEqualTo(ORACLE.replay(history).get("s1"));
            assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(6L)));
        }
        assertThat(applier.apply(credits(2, 3))).as("below the delete").isEqualTo(Outcome.SUPERSEDED);
    }

    @Test
    void a_delete_that_leaves_no_increment_clears_the_counter() {
        applier.apply(credits(1, 5));
        applier.apply(Operation.delete("s1", 2));

        assertThat(state().counters()).isEmpty();
        assertThat(students.find(eq("_id", "s1")).first()).doesNotContainKey("credits");
        assertThat(state()).isEqualTo(ORACLE.replay(List.of(credits(1, 5), Operation.delete("s1", 2))).get("s1"));
    }

    @Test
    void a_delete_with_the_seq_of_an_increment_is_a_seq_collision() {
        applier.apply(credits(4, 5));

        assertThat(applier.apply(Operation.delete("s1", 4))).isEqualTo(Outcome.SEQ_COLLISION);
    }

    @Test
    void compaction_folds_old_increments_by_a_seq_prefix_and_the_value_stays() {
        applier.apply(credits(1, 5));
        applier.apply(credits(3, 2));
        clock.advance(GRACE.plusMinutes(1));
        applier.apply(credits(2, 4));   // young, and below an old one: the prefix stops before it

        assertThat(compactor.compactAll().incrementsFolded()).isEqualTo(1);
        BsonDocument stored = students.find(eq("_id", "s1")).first();
        assertThat(stored.getDocument("_incFloor").getInt64("credits").getValue()).isEqualTo(1);
        assertThat(stored.getDocument("_inc")).as("the rest coalesced into one run of 2 and 3").doesNotContainKey("credits");
        BsonDocument run = stored.getDocument("_incRuns").getArray("credits").get(0).asDocument();
        assertThat(run.getInt64("seq").getValue()).isEqualTo(2);
        assertThat(run.getInt64("hi").getValue()).isEqualTo(3);
        assertThat(run.getInt64("d").getValue()).isEqualTo(6);
        assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(11L)));
    }

    @Test
    void a_late_increment_at_or_below_the_fold_is_beyond_the_horizon_and_counts_nothing() {
        applier.apply(credits(5, 1));
        clock.advance(GRACE.plusMinutes(1));
        compactor.compactAll();

        assertThat(applier.apply(credits(5, 1))).as("already counted, or late: it cannot be told")
                .isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(applier.apply(credits(3, 1))).isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(applier.apply(credits(6, 1))).isEqualTo(Outcome.APPLIED);
        assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(2L)));
    }

    @Test
    void a_delete_above_the_fold_stays_exact_and_one_below_it_is_beyond_the_horizon() {
        applier.apply(credits(2, 5));
        applier.apply(credits(4, 3));
        clock.advance(GRACE.plusMinutes(1));
        compactor.compactAll();
        applier.apply(credits(7, 2));

        assertThat(applier.apply(Operation.delete("s1", 3))).isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(applier.apply(Operation.delete("s1", 5))).isEqualTo(Outcome.APPLIED);
        assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(2L)));
    }

    @Test
    void a_documents_size_stays_flat_over_many_increments_with_compaction() {
        int before = 0;
        for (int round = 0; round < 10; round++) {
            for (int i = 1; i <= 100; i++) {
                applier.apply(credits(round * 100L + i, 1));
            }
            clock.advance(GRACE.plusMinutes(1));
            compactor.compactAll();
            int size = students.find(eq("_id", "s1")).first().toJson().length();
            if (round == 0) {
                before = size;
            }
            assertThat(size).as("round %d", round).isLessThanOrEqualTo(before + 16);
        }
        assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(1000L)));
    }

    @Test
    void the_schema_names_the_operation_a_counter_takes_and_refuses_an_undeclared_one() {
        assertThatThrownBy(() -> applier.apply(Operation.assign("s1", 1, "credits", new BsonString("x"))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("is a counter, not a register: use increment");
        assertThatThrownBy(() -> applier.apply(Operation.increment("s1", 1, "name", 1)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("is a register, not a counter: use assign");
        assertThatThrownBy(() -> applier.apply(Operation.increment("s1", 1, "karma", 1)))
                .isInstanceOf(UnknownFieldException.class).hasMessageContaining("'karma' is not a declared counter");
    }

    @Test
    void a_counter_another_program_stored_as_text_is_refused_by_name() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("credits", new BsonString("12")));

        assertThatThrownBy(() -> applier.apply(credits(1, 1))).isInstanceOf(CannotApplyException.class)
                .hasMessageContaining("counter 'credits' is a string, not a whole number");
    }

    @Test
    void a_delete_whose_kept_increments_sum_past_a_long_keeps_their_exact_sum_as_a_decimal() {
        applier.apply(credits(1, -5));
        applier.apply(credits(10, Long.MAX_VALUE));
        applier.apply(credits(11, 3));   // MAX - 2 so far: no $inc passed a long

        assertThat(applier.apply(Operation.delete("s1", 5))).isEqualTo(Outcome.APPLIED);

        BigInteger exact = BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.valueOf(3));
        assertThat(state().counters()).isEqualTo(Map.of("credits", exact));
        assertThat(students.find().first().get("credits"))
                .isEqualTo(new org.bson.BsonDecimal128(new org.bson.types.Decimal128(new java.math.BigDecimal(exact))));
    }

    @Test
    void a_counter_another_program_left_null_is_refused_by_name() {
        students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("credits", org.bson.BsonNull.VALUE));

        assertThatThrownBy(() -> applier.apply(credits(1, 1))).isInstanceOf(CannotApplyException.class)
                .hasMessageContaining("counter 'credits' is a null, not a whole number");
    }

    // issue 50: each reproduced with two or five operations

    @Test
    void an_increment_past_the_largest_long_is_applied_and_the_exact_sum_stored_as_a_decimal() {
        assertThat(applier.apply(credits(1, Long.MAX_VALUE - 10))).isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(credits(2, 20))).isEqualTo(Outcome.APPLIED);

        assertThat(students.find().first().get("credits"))
                .isEqualTo(new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("9223372036854775817")));
        assertThat(state().counters()).isEqualTo(Map.of("credits",
                BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.TEN)));
    }

    @Test
    void past_a_long_either_order_gives_the_same_stored_counter() {
        List<Operation> ops = List.of(credits(1, Long.MAX_VALUE), credits(2, 1));
        ops.forEach(applier::apply);
        BsonDocument inOrder = students.find().first();
        students.drop();

        reversed(ops).forEach(op -> assertThat(applier.apply(op)).isEqualTo(Outcome.APPLIED));

        assertThat(students.find().first().get("credits")).isEqualTo(inOrder.get("credits"))
                .isEqualTo(new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("9223372036854775808")));
    }

    @Test
    void a_sum_back_within_a_long_is_stored_as_a_long_again() {
        applier.apply(credits(1, Long.MAX_VALUE));
        applier.apply(credits(2, Long.MAX_VALUE));   // a decimal now

        applier.apply(credits(3, -Long.MAX_VALUE));

        assertThat(students.find().first().get("credits")).isEqualTo(new org.bson.BsonInt64(Long.MAX_VALUE));
    }

    @Test
    void a_delete_whose_kept_increments_fit_a_long_is_applied_whatever_they_summed_to_on_the_way() {
        for (Operation op : List.of(credits(10, Long.MAX_VALUE), credits(2, -Long.MAX_VALUE), credits(11, Long.MAX_VALUE),
                credits(12, -Long.MAX_VALUE))) {
            assertThat(applier.apply(op)).isEqualTo(Outcome.APPLIED);
        }

        assertThat(applier.apply(Operation.delete("s1", 5))).isEqualTo(Outcome.APPLIED);

        assertThat(students.find().first().get("credits")).isEqualTo(new org.bson.BsonInt64(Long.MAX_VALUE));
    }

    @Test
    void an_increment_that_finds_no_room_coalesces_the_pending_ones_into_a_run_and_the_value_stays_exact() {
        for (long seq = 1; seq <= 600; seq++) {
            assertThat(applier.apply(credits(seq, 2))).isEqualTo(Outcome.APPLIED);
        }

        BsonDocument stored = students.find().first();
        assertThat(stored.get("credits")).isEqualTo(new org.bson.BsonInt64(1200));
        assertThat(stored.getDocument("_inc").getArray("credits")).as("pending since the last coalescing, at 502")
                .hasSize(98);
        assertThat(stored.getDocument("_incRuns").getArray("credits")).as("one run of 1 to 502")
                .containsExactly(new BsonDocument("seq", new org.bson.BsonInt64(1)).append("hi", new org.bson.BsonInt64(502))
                        .append("d", new org.bson.BsonInt64(1004)).append("at", stored.getDocument("_incRuns")
                                .getArray("credits").get(0).asDocument().get("at")));
        assertThat(applier.apply(credits(150, 2))).as("in the run: counted once").isEqualTo(Outcome.DUPLICATE);
        assertThat(applier.apply(Operation.delete("s1", 100))).as("a delete inside the run's seqs is a seq collision")
                .isEqualTo(Outcome.SEQ_COLLISION);
    }

    @Test
    void a_late_delete_keeps_exactly_the_runs_above_it() {
        for (long seq = 1; seq <= 300; seq++) {
            if (seq != 120) {   // the delete's seq: the increments either side of it are never one run
                applier.apply(credits(seq, 1));
            }
        }

        assertThat(applier.apply(Operation.delete("s1", 120))).isEqualTo(Outcome.APPLIED);

        assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(180)));
        assertThat(state()).isEqualTo(ORACLE.replay(java.util.stream.LongStream.rangeClosed(1, 300)
                .mapToObj(seq -> seq == 120 ? Operation.delete("s1", 120) : credits(seq, 1)).toList()).get("s1"));
    }

    @Test
    void a_document_of_the_previous_version_with_more_pending_increments_than_kept_now_is_read_and_coalesced() {
        // one entry per increment, 11 to 260 but a gap at 99 and 100, and a fold below 10: what counters kept before
        StringBuilder entries = new StringBuilder();
        long sum = 1000;   // folded
        for (int seq = 11; seq <= 260; seq++) {
            if (seq != 99 && seq != 100) {
                entries.append(entries.length() == 0 ? "" : ",").append("{seq: {$numberLong: '").append(seq)
                        .append("'}, d: {$numberLong: '2'}, at: {$date: 0}}");
                sum += 2;
            }
        }
        students.insertOne(BsonDocument.parse("{_id: 's1', credits: {$numberLong: '" + sum + "'}, _inc: {credits: ["
                + entries + "]}, _incFloor: {credits: {$numberLong: '10'}}, _floor: {$numberLong: '0'},"
                + " _gcFloor: {$numberLong: '0'}, _v: {$numberLong: '300'}}"));

        assertThat(applier.apply(credits(99, 5))).as("in the gap").isEqualTo(Outcome.APPLIED);
        assertThat(applier.apply(credits(50, 2))).as("an entry of the previous version").isEqualTo(Outcome.DUPLICATE);
        assertThat(applier.apply(credits(5, 2))).as("below its fold").isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(applier.apply(credits(261, 1))).isEqualTo(Outcome.APPLIED);
        assertThat(state().counters()).isEqualTo(Map.of("credits", BigInteger.valueOf(sum + 5 + 1)));

        assertThat(applier.apply(Operation.delete("s1", 100))).as("in the gap").isEqualTo(Outcome.APPLIED);
        assertThat(state().counters()).as("the increments above it: 101 to 261")
                .isEqualTo(Map.of("credits", BigInteger.valueOf(160 * 2 + 1)));
    }

    @Test
    void a_32_bit_counter_another_program_stored_is_incremented_past_an_int_and_past_a_long() {
        students.insertOne(BsonDocument.parse("{_id: 's1', credits: {$numberInt: '2147483600'}, _v: {$numberLong: '1'}}"));

        assertThat(applier.apply(credits(1, 100))).isEqualTo(Outcome.APPLIED);
        assertThat(students.find().first().get("credits")).isEqualTo(new org.bson.BsonInt64(2147483700L));
        assertThat(applier.apply(credits(2, Long.MAX_VALUE))).isEqualTo(Outcome.APPLIED);

        assertThat(state().counters()).isEqualTo(Map.of("credits",
                BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.valueOf(2147483700L))));
    }

    @Test
    void a_decimal_counter_another_program_stored_is_typed_by_its_sum() {
        students.insertOne(BsonDocument.parse("{_id: 's1', credits: {$numberDecimal: '5.00'}, _v: {$numberLong: '1'}}"));
        students.insertOne(BsonDocument.parse("{_id: 's2', credits: {$numberDecimal: '1E+40'}, _v: {$numberLong: '1'}}"));

        assertThat(applier.apply(credits(1, 1))).isEqualTo(Outcome.APPLIED);
        assertThat(students.find(eq("_id", "s1")).first().get("credits")).isEqualTo(new org.bson.BsonInt64(6));
        assertThatThrownBy(() -> applier.apply(Operation.increment("s2", 1, "credits", 1)))
                .isInstanceOf(CannotApplyException.class)
                .hasMessageStartingWith("no progress: a counter's sum 10000000000000000000000000000000000000001 has"
                        + " more than the 34 digits");
    }

    private EntityState state() {
        return EntityState.of(students.find(eq("_id", "s1")).first(), SCHEMA);
    }

    private static List<Operation> reversed(List<Operation> ops) {
        List<Operation> copy = new ArrayList<>(ops);
        Collections.reverse(copy);
        return copy;
    }
}
