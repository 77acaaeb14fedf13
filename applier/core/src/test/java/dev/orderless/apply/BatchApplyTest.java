package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.internal.CounterBook;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.orderless.CannotApplyException;
import dev.orderless.TransientException;
import dev.orderless.backends.MongoBackend;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link GuardedApplier#applyAll}: one bulk write for the first writes, each op's own outcome. */
@ExtendWith(MongoExtension.class)
class BatchApplyTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder()
            .set(SetField.of("classes", "name")).register("name").counter("credits").build();

    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;

    private final LongAdder commands = new LongAdder();
    private MongoClient counted;
    private GuardedApplier countedApplier;

    @BeforeEach
    void setUp(MongoBackend backend, MongoDatabase db) {
        students = db.getCollection("students", BsonDocument.class);
        applier = GuardedApplier.create(students, SCHEMA);
        counted = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString()))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        commands.increment();
                    }
                }).build());
        countedApplier = GuardedApplier.create(counted.getDatabase(db.getName()).getCollection("students",
                BsonDocument.class), SCHEMA);
    }

    @AfterEach
    void tearDown() {
        counted.close();
    }

    /** The commands {@code batch} sends, hinting every op as present; asserts each outcome. */
    private long hintedRoundTrips(List<Operation> batch, Outcome... expected) {
        commands.reset();
        List<BatchResult> results = countedApplier.applyAll(batch, op -> true);
        assertThat(results).map(r -> ((BatchResult.Done) r).outcome()).containsExactly(expected);
        return commands.sum();
    }

    @Test
    void elements_hinted_as_present_are_refreshed_in_place_by_the_bulk_write_alone() {
        applier.applyAll(List.of(Operation.add("s1", 1, "classes", "CS 101"), Operation.add("s1", 2, "classes", "CS 102"),
                Operation.remove("s1", 3, "classes", "CS 103"), Operation.add("s2", 1, "classes", "CS 101")));

        long roundTrips = hintedRoundTrips(List.of(Operation.add("s1", 4, "classes", "CS 101"),
                Operation.add("s1", 5, "classes", "CS 102"), Operation.remove("s1", 6, "classes", "CS 103"),
                Operation.add("s2", 7, "classes", "CS 101")), Outcome.APPLIED, Outcome.APPLIED, Outcome.APPLIED,
                Outcome.APPLIED);

        assertThat(roundTrips).as("one bulk write, no read").isEqualTo(1);
        assertThat(Stored.entry(students.find(Filters.eq("_id", "s1")).first(), "classes", "name", "CS 102"))
                .hasValueSatisfying(entry -> assertThat(Stored.seqOf(entry)).isEqualTo(5));
    }

    @Test
    void a_batch_of_increments_costs_no_more_round_trips_than_a_batch_of_adds() {
        List<Operation> adds = new ArrayList<>();
        List<Operation> increments = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            adds.add(Operation.add("a" + i % 10, 1000 + i, "classes", "CS " + i));
            increments.add(Operation.increment("i" + i % 10, 1000 + i, "credits", i % 7 - 3));
        }
        for (int s = 0; s < 10; s++) {   // the documents exist: the steady state
            applier.apply(Operation.assign("a" + s, 2, "name", new org.bson.BsonString("x")));
            applier.apply(Operation.increment("i" + s, 2, "credits", 0));
        }

        commands.reset();
        countedApplier.applyAll(adds);
        long forAdds = commands.sum();
        commands.reset();
        countedApplier.applyAll(increments);
        long forIncrements = commands.sum();

        System.out.printf("[batch] 200 ops over 10 entities in one batch: adds %d round trips (%.3f per op),"
                + " increments %d (%.3f per op)%n", forAdds, forAdds / 200.0, forIncrements, forIncrements / 200.0);
        assertThat(forIncrements).isLessThanOrEqualTo(forAdds);
        assertThat(EntityState.readAll(students.find(Filters.regex("_id", "^i")), SCHEMA).values())
                .allSatisfy(state -> assertThat(state.counters()).containsKey("credits"));
    }

    @Test
    void a_batch_of_increments_that_finds_no_room_settles_in_one_read_and_one_more_command() {
        for (long seq = 1; seq <= CounterBook.PENDING_MAX - 10; seq++) {
            applier.apply(Operation.increment("hot", seq, "credits", 1));
        }
        List<Operation> batch = new ArrayList<>();
        for (long seq = CounterBook.PENDING_MAX - 9; seq <= CounterBook.PENDING_MAX + 40; seq++) {
            batch.add(Operation.increment("hot", seq, "credits", 1));
        }

        commands.reset();
        List<BatchResult> results = countedApplier.applyAll(batch);

        assertThat(results).map(r -> ((BatchResult.Done) r).outcome()).containsOnly(Outcome.APPLIED);
        assertThat(commands.sum()).as("the blind bulk write, a read, one command: the coalescing compare-and-set with"
                + " the other increments behind it").isEqualTo(3);
        assertThat(students.find(Filters.eq("_id", "hot")).first().get("credits"))
                .isEqualTo(new org.bson.BsonInt64(CounterBook.PENDING_MAX + 40));
    }

    @Test
    void a_wrong_hint_costs_a_read_and_never_changes_an_outcome() {
        applier.applyAll(List.of(Operation.add("s1", 5, "classes", "CS 101"), Operation.remove("s1", 2, "classes", "CS 102"),
                Operation.add("s1", 3, "classes", "CS 104")));
        List<Operation> batch = List.of(
                Operation.add("s1", 4, "classes", "CS 101"),      // superseded: a newer entry is stored
                Operation.add("s1", 6, "classes", "CS 102"),      // in the tombstones: a move, not a refresh
                Operation.add("s1", 7, "classes", "CS 103"),      // not stored at all
                Operation.add("s1", 3, "classes", "CS 104"),      // redelivered
                Operation.add("s9", 1, "classes", "CS 101"));     // no document
        List<Operation> history = new ArrayList<>(List.of(Operation.add("s1", 5, "classes", "CS 101"),
                Operation.remove("s1", 2, "classes", "CS 102"), Operation.add("s1", 3, "classes", "CS 104")));
        history.addAll(batch);

        long roundTrips = hintedRoundTrips(batch, Outcome.SUPERSEDED, Outcome.APPLIED, Outcome.APPLIED,
                Outcome.DUPLICATE, Outcome.APPLIED);

        assertThat(roundTrips).as("the bulk write, one read, one bulk write for the ops that still apply").isEqualTo(3);
        assertThat(EntityState.readAll(students.find(), SCHEMA)).isEqualTo(new ReferenceModel(SCHEMA).replay(history));
    }

    @Test
    void when_some_hinted_refreshes_match_and_some_do_not_each_is_decided_from_a_read() {
        applier.applyAll(List.of(Operation.add("s1", 1, "classes", "CS 101"), Operation.add("s1", 9, "classes", "CS 102")));

        hintedRoundTrips(List.of(Operation.add("s1", 2, "classes", "CS 101"), Operation.add("s1", 3, "classes", "CS 102")),
                Outcome.APPLIED, Outcome.SUPERSEDED);

        assertThat(EntityState.readAll(students.find(), SCHEMA)).isEqualTo(new ReferenceModel(SCHEMA).replay(List.of(
                Operation.add("s1", 1, "classes", "CS 101"), Operation.add("s1", 9, "classes", "CS 102"),
                Operation.add("s1", 2, "classes", "CS 101"), Operation.add("s1", 3, "classes", "CS 102"))));
    }

    /** The commands {@code batch} sends, no hint; asserts each outcome. */
    private long roundTrips(List<Operation> batch, Outcome... expected) {
        commands.reset();
        List<BatchResult> results = countedApplier.applyAll(batch);
        assertThat(results).map(r -> ((BatchResult.Done) r).outcome()).containsExactly(expected);
        return commands.sum();
    }

    @Test
    void ops_of_one_entity_decided_from_one_read_are_written_in_one_bulk_write() {
        applier.applyAll(List.of(Operation.add("hot", 1, "classes", "CS 101"), Operation.remove("hot", 2, "classes", "CS 102"),
                Operation.assign("hot", 3, "name", new BsonString("Ada"))));
        List<Operation> batch = List.of(Operation.add("hot", 5, "classes", "CS 101"),   // a refresh, beside its move
                Operation.add("hot", 6, "classes", "CS 102"), Operation.assign("hot", 7, "name", new BsonString("Grace")),
                Operation.delete("hot", 4));                                              // reads first

        long roundTrips = roundTrips(batch, Outcome.APPLIED, Outcome.APPLIED, Outcome.APPLIED, Outcome.APPLIED);

        assertThat(roundTrips).as("the blind bulk write (the refresh's beside its move), then the delete's read and"
                + " its compare-and-set").isEqualTo(3);
        List<Operation> history = new ArrayList<>(List.of(Operation.add("hot", 1, "classes", "CS 101"),
                Operation.remove("hot", 2, "classes", "CS 102"), Operation.assign("hot", 3, "name", new BsonString("Ada"))));
        history.addAll(batch);
        assertThat(EntityState.readAll(students.find(), SCHEMA)).isEqualTo(new ReferenceModel(SCHEMA).replay(history));
    }

    @Test
    void several_re_adds_settle_in_the_blind_bulk_write_each_with_its_own_outcome() {
        applier.applyAll(List.of(Operation.add("hot", 1, "classes", "CS 101"), Operation.add("hot", 2, "classes", "CS 102"),
                Operation.add("hot", 3, "classes", "CS 103")));
        List<Operation> reEnrollments = List.of(Operation.add("hot", 5, "classes", "CS 101"),
                Operation.add("hot", 6, "classes", "CS 102"), Operation.add("hot", 7, "classes", "CS 103"));

        long roundTrips = roundTrips(reEnrollments, Outcome.APPLIED, Outcome.APPLIED, Outcome.APPLIED);

        // each refresh goes beside its move as an upsert: a miss would be its own write error (a positional miss),
        // so one bulk write tells each outcome
        assertThat(roundTrips).as("one bulk write: the moves and the refreshes beside them").isEqualTo(1);
    }

    @Test
    void of_two_ops_on_one_slot_in_a_batch_only_the_later_is_written_and_the_earlier_is_superseded_unread() {
        List<Operation> renames = List.of(Operation.assign("s1", 2, "name", new BsonString("Ada")),
                Operation.assign("s1", 5, "name", new BsonString("Grace")), Operation.remove("s1", 3, "classes", "CS 101"),
                Operation.add("s1", 1, "classes", "CS 101"));

        long roundTrips = roundTrips(renames, Outcome.SUPERSEDED, Outcome.APPLIED, Outcome.APPLIED, Outcome.SUPERSEDED);

        // the later op's write is guarded on the floor being none of the earlier's seqs: its match tells there is
        // no seq collision (see BatchOutcomesTest for the one there is)
        assertThat(roundTrips).as("one bulk write of the later op of each slot, no read").isEqualTo(1);
        assertThat(EntityState.readAll(students.find(), SCHEMA)).isEqualTo(new ReferenceModel(SCHEMA).replay(renames));
    }

    @Test
    void the_same_op_twice_in_a_batch_is_applied_once_and_found_a_duplicate_once() {
        Operation add = Operation.add("s1", 4, "classes", "CS 101");

        assertThat(roundTrips(List.of(add, add), Outcome.APPLIED, Outcome.DUPLICATE))
                .as("the first is written; the second waits for a read of what the first wrote").isEqualTo(2);
    }

    @Test
    void each_op_gets_the_outcome_apply_would_give_it_in_the_order_given() {
        applier.apply(Operation.add("stale", 5, "classes", "CS 101"));
        applier.apply(Operation.assign("dup", 3, "name", new BsonString("Ada")));
        applier.apply(Operation.add("gone", 1, "classes", "CS 101"));

        List<BatchResult> results = applier.applyAll(List.of(
                Operation.remove("stale", 4, "classes", "CS 101"),           // older than the add: superseded
                Operation.assign("dup", 3, "name", new BsonString("Ada")),   // redelivered
                Operation.add("new", 1, "classes", "CS 102"),                // a first write that inserts
                Operation.delete("gone", 2),                                 // reads first
                Operation.assign("stale", 6, "name", new BsonString("Grace"))));   // matches an existing document

        assertThat(results).extracting(BatchResult::op).extracting(Operation::entity)
                .containsExactly("stale", "dup", "new", "gone", "stale");
        assertThat(results).map(r -> ((BatchResult.Done) r).outcome()).containsExactly(Outcome.SUPERSEDED,
                Outcome.DUPLICATE, Outcome.APPLIED, Outcome.APPLIED, Outcome.APPLIED);
    }

    @Test
    void a_bad_op_is_refused_and_the_rest_of_its_batch_is_applied() {
        List<BatchResult> results = applier.applyAll(List.of(
                Operation.add("s1", 1, "classes", "CS 101"),
                Operation.assign("s1", 2, "undeclared", new BsonString("x")),
                Operation.add("s2", 1, "classes", "CS 101")));

        assertThat(results.get(0)).isEqualTo(new BatchResult.Done(results.get(0).op(), Outcome.APPLIED));
        assertThat(results.get(1)).isInstanceOfSatisfying(BatchResult.Refused.class,
                r -> assertThat(r.reason().kind()).isEqualTo(CannotApplyException.Kind.UNKNOWN_FIELD));
        assertThat(results.get(2)).isEqualTo(new BatchResult.Done(results.get(2).op(), Outcome.APPLIED));
    }

    @Test
    void a_whole_history_of_one_entity_in_one_batch_ends_as_in_seq_order() {
        List<Operation> history = new ArrayList<>(List.of(
                Operation.add("s1", 1, "classes", "CS 101"),
                Operation.assign("s1", 2, "name", new BsonString("Ada")),
                Operation.remove("s1", 3, "classes", "CS 101"),
                Operation.add("s1", 4, "classes", "CS 101"),
                Operation.delete("s1", 5),
                Operation.add("s1", 6, "classes", "CS 102"),
                Operation.assign("s1", 7, "name", new BsonString("Grace"))));
        java.util.Collections.reverse(history);
        history.addAll(history.subList(0, 3));   // and some of it twice

        List<BatchResult> results = applier.applyAll(history);

        assertThat(results).allMatch(r -> r instanceof BatchResult.Done);
        assertThat(EntityState.readAll(students.find(), SCHEMA))
                .isEqualTo(new ReferenceModel(SCHEMA).replay(history));
    }

    @Test
    void a_bulk_write_refused_as_a_whole_is_tried_op_by_op_so_only_the_culprit_is_refused() {
        String huge = "x".repeat(17 * 1024 * 1024);   // the driver refuses the whole command before sending it

        List<BatchResult> results = applier.applyAll(List.of(
                Operation.assign("s1", 1, "name", new BsonString("Ada")),
                Operation.assign("s2", 1, "name", new BsonString(huge)),
                Operation.add("s3", 1, "classes", "CS 101")));

        // the driver may have sent the part of the bulk before the huge op: then s1 is already written
        assertThat(results.get(0)).isInstanceOfSatisfying(BatchResult.Done.class,
                r -> assertThat(r.outcome()).isIn(Outcome.APPLIED, Outcome.DUPLICATE));
        assertThat(results.get(1)).isInstanceOfSatisfying(BatchResult.Refused.class,
                r -> assertThat(r.reason().kind()).isEqualTo(CannotApplyException.Kind.TOO_LARGE));
        assertThat(results.get(2)).isInstanceOfSatisfying(BatchResult.Done.class,
                r -> assertThat(r.outcome()).isIn(Outcome.APPLIED, Outcome.DUPLICATE));
        assertThat(EntityState.readAll(students.find(), SCHEMA)).isEqualTo(new ReferenceModel(SCHEMA).replay(List.of(
                Operation.assign("s1", 1, "name", new BsonString("Ada")), Operation.add("s3", 1, "classes", "CS 101"))));
    }

    @Test
    void a_connection_one_op_drops_fails_that_op_alone_and_the_rest_of_its_batch_is_applied(MongoBackend backend,
                                                                                            MongoDatabase db) {
        String[] target = new ConnectionString(backend.connectionString()).getHosts().get(0).split(":");
        try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
             MongoClient through = MongoClients.create("mongodb://127.0.0.1:" + proxy.port()
                     + "/?directConnection=true&serverSelectionTimeoutMS=2000&socketTimeoutMS=3000")) {
            GuardedApplier proxied = GuardedApplier.create(through.getDatabase(db.getName())
                    .getCollection("students", BsonDocument.class), SCHEMA);
            proxy.dropWhenClientSends("dropped-entity");

            List<BatchResult> results = proxied.applyAll(List.of(Operation.add("s1", 1, "classes", "CS 101"),
                    Operation.add("dropped-entity", 1, "classes", "CS 101"), Operation.add("s2", 1, "classes", "CS 101")));

            assertThat(results.get(0)).isInstanceOf(BatchResult.Done.class);
            assertThat(results.get(1)).isInstanceOfSatisfying(BatchResult.Failed.class,
                    r -> assertThat(r.error()).isInstanceOf(TransientException.class));
            assertThat(results.get(2)).isInstanceOf(BatchResult.Done.class);
            assertThat(db.getCollection("students").countDocuments()).isEqualTo(2);
        }
    }

    @Test
    void an_empty_batch_writes_nothing() {
        assertThat(applier.applyAll(List.of())).isEmpty();
        assertThat(students.countDocuments()).isZero();
    }
}
