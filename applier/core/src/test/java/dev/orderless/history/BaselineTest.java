package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The history turned on for a collection that already has data (issue 37): orders consumed without the history,
 * then with it. A read answers only what the records and the baseline can vouch for, and says why otherwise.
 */
@ExtendWith(MongoExtension.class)
class BaselineTest {
    static final CollectionSchema ORDERS = CollectionSchema.builder().set(SetField.of("items", "sku"))
            .register("status").register("coupon").build();
    private static final ReferenceModel ORACLE = new ReferenceModel(ORDERS);

    private final ManualClock clock = new ManualClock();
    private MongoDatabase db;
    private MongoCollection<BsonDocument> live;
    private MongoCollection<BsonDocument> records;
    private GuardedApplier applier;
    private History history;
    private RecordingApplier recording;

    @BeforeEach
    void setUp(MongoDatabase db) {
        this.db = db;
        live = db.getCollection("orders", BsonDocument.class);
        records = db.getCollection("orders_history", BsonDocument.class);
        applier = GuardedApplier.create(live, ORDERS);
        history = History.of(records, ORDERS, HistoryOptions.ofDefaults().withClock(clock)).withLive(live);
        recording = history.recording(applier);
    }

    /** The order-1: seven operations consumed before the history was on; two items and a coupon left. */
    private static List<Operation> beforeTheHistory() {
        return List.of(Operation.add("order-1", 1, "items", "sku-1"), Operation.add("order-1", 2, "items", "sku-2"),
                status(3, "placed"), Operation.add("order-1", 4, "items", "sku-3"),
                Operation.remove("order-1", 5, "items", "sku-3"),
                Operation.assign("order-1", 6, "coupon", new BsonString("SAVE10")), status(7, "paid"));
    }

    private static Operation status(long seq, String status) {
        return Operation.assign("order-1", seq, "status", new BsonString(status));
    }

    private static EntityState oracle(List<Operation> ops, long upTo) {
        return ORACLE.replay(ops.stream().filter(op -> op.seq() <= upTo).toList()).get("order-1");
    }

    private static List<Operation> plus(List<Operation> ops, Operation... more) {
        List<Operation> all = new ArrayList<>(ops);
        all.addAll(List.of(more));
        return all;
    }

    /** order-1 consumed without the history, compacted (the tombstone of sku-3, seq 5, dropped), then baselined. */
    private void compactedThenBaselined() {
        beforeTheHistory().forEach(applier::apply);
        // as TombstoneCompactor does after its grace
        live.updateOne(new BsonDocument("_id", new BsonString("order-1")), BsonDocument.parse(
                "{$pull: {deleted_items: {sku: 'sku-3'}}, $set: {_gcFloor: {$numberLong: '5'}}}"));
        history.baseline(() -> true);
    }

    private EntityState liveState() {
        return EntityState.readAll(live.find(), ORDERS).get("order-1");
    }

    @Test
    void without_the_baseline_an_order_whose_live_document_predates_its_records_reads_unknowable_and_says_why() {
        beforeTheHistory().forEach(applier::apply);
        history.beginBaseline(HistoryBaseline.Start.DETECT);   // under way: documents, and no records yet
        recording.apply(status(8, "shipped"));

        Read<EntityState> read = history.asOf("order-1", 8);

        assertThat(read).as("the records hold only seq 8: a status and no items").isInstanceOfSatisfying(
                Read.Unknowable.class, r -> assertThat(r.reason()).contains("baseline has not taken 'order-1' in yet"));
        assertThat(history.changes("order-1", 7, 8)).isInstanceOf(Read.Unknowable.class);
    }

    @Test
    void a_history_whose_start_was_never_decided_reads_unknowable_naming_the_call_to_make() {
        beforeTheHistory().forEach(applier::apply);
        History.of(records, ORDERS).recording(applier).apply(status(8, "shipped"));   // a consumer recorded

        assertThat(history.asOf("order-1", 8)).isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason())
                .contains("how the history orders_history starts was never decided")
                .contains("call History.beginBaseline(Start.DETECT) before the consumers that record start"));
        assertThat(history.versions("order-1").unknowable()).hasValueSatisfying(reason ->
                assertThat(reason).contains("History.beginBaseline"));
    }

    @Test
    void before_the_baseline_is_complete_items_from_before_the_history_that_a_recorded_delete_overwrote_read_unknowable() {
        applier.apply(Operation.add("order-1", 1, "items", "sku-1"));   // consumed before the history was on
        applier.apply(Operation.add("order-1", 2, "items", "sku-2"));
        history.beginBaseline(HistoryBaseline.Start.DETECT);   // under way: documents, and no records yet
        recording.apply(Operation.delete("order-1", 5));   // the document now shows seq 5 alone, which is recorded

        for (long seq : new long[] {1, 2, 4, 5}) {
            assertThat(history.asOf("order-1", seq)).as("as of %d: sku-1 was live at 1", seq)
                    .isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason())
                            .contains("baseline has not taken 'order-1' in yet"));
        }
    }

    @Test
    void before_the_baseline_is_complete_a_register_renamed_since_reads_unknowable_in_changes_and_versions_too() {
        applier.apply(status(1, "placed"));   // before the history was on
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        recording.apply(status(3, "paid"));

        assertThat(history.asOf("order-1", 2)).as("placed at 2").isInstanceOf(Read.Unknowable.class);
        assertThat(history.changes("order-1", 2, 3)).isInstanceOf(Read.Unknowable.class);
        assertThat(history.versions("order-1").unknowable()).hasValueSatisfying(reason ->
                assertThat(reason).contains("baseline has not taken 'order-1' in yet"));
    }

    @Test
    void once_the_baseline_is_complete_an_entity_it_did_not_take_in_is_known_from_its_first_recorded_operation() {
        applier.apply(Operation.add("order-0", 1, "items", "sku-1"));   // before the history was on
        assertThat(history.baseline(() -> true).complete()).isTrue();
        List<Operation> ops = new ArrayList<>(beforeTheHistory());
        ops.forEach(recording::apply);   // its live document is checked at each read: the records explain it

        for (Operation op : ops) {
            assertThat(history.asOf("order-1", op.seq()).value()).as("as of %d", op.seq()).contains(oracle(ops, op.seq()));
        }
        assertThat(history.versions("order-1").unknowable()).isEmpty();
    }

    @Test
    void after_the_baseline_an_unrecorded_apply_whose_effects_were_overwritten_since_shows_in_the_documents_version() {
        history.baseline(() -> true);   // an empty collection: complete at once
        Operation remove = Operation.remove("order-1", 2, "items", "sku-1");
        List<Operation> ops = List.of(Operation.add("order-1", 1, "items", "sku-1"), remove,
                Operation.add("order-1", 3, "items", "sku-1"));
        recording.apply(ops.get(0));
        applier.apply(remove);   // an instance still without the history
        recording.apply(ops.get(2));   // the tombstone at 2 is overwritten: the document shows seqs 3 only

        assertThat(history.asOf("order-1", 2)).as("sku-1 removed at 2: %s", oracle(ops, 2))
                .isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason())
                        .contains("counts 3 applied operations (_v) and the history holds 2 records"));
    }

    @Test
    void before_the_baseline_is_complete_a_rebuild_leaves_out_every_entity_it_has_not_taken_in() {
        beforeTheHistory().forEach(applier::apply);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        recording.apply(Operation.add("order-2", 1, "items", "sku-1"));

        Rebuild rebuild = history.rebuild(GuardedApplier.create(db.getCollection("rebuilt", BsonDocument.class), ORDERS));

        assertThat(rebuild.unrestored()).as("order-2 may have had operations before the history too").isEqualTo(1);
        assertThat(rebuild.reasons()).singleElement().asString().contains("has not taken 'order-2' in yet");
        assertThat(db.getCollection("rebuilt").countDocuments()).isZero();
    }

    @Test
    void after_the_baseline_the_state_at_or_above_its_horizon_is_the_live_state_with_the_recorded_operations() {
        beforeTheHistory().forEach(applier::apply);
        assertThat(history.baseline(() -> true)).isEqualTo(new BaselinePass(1, 1, 0, 0, 0, true));
        recording.apply(status(8, "shipped"));

        List<Operation> all = plus(beforeTheHistory(), status(8, "shipped"));
        assertThat(history.asOf("order-1", 8).value()).as("two items, the coupon, shipped").contains(oracle(all, 8))
                .contains(liveState());
        assertThat(history.asOf("order-1", 7).value()).contains(oracle(all, 7));
        assertThat(history.changes("order-1", 7, 8).value()).hasValueSatisfying(changes ->
                assertThat(changes).extracting(Version::seq).containsExactly(8L));
        Versions versions = history.versions("order-1");
        assertThat(versions.baseline()).isTrue();
        assertThat(versions.horizon()).isEqualTo(7);
    }

    @Test
    void below_the_baseline_horizon_a_read_says_the_history_vouches_only_from_it_on() {
        beforeTheHistory().forEach(applier::apply);
        history.baseline(() -> true);

        assertThat(history.asOf("order-1", 6)).isInstanceOfSatisfying(Read.Unknowable.class, r ->
                assertThat(r.reason()).contains("below its baseline horizon 7").contains("before the history was on"));
    }

    @Test
    void an_operation_recorded_before_the_baseline_read_the_document_and_applied_after_it_is_in_the_state() {
        beforeTheHistory().forEach(applier::apply);
        Operation inFlight = Operation.add("order-1", 5_000, "items", "sku-9");
        Operation older = Operation.remove("order-1", 4_500, "items", "sku-1");
        history.record(inFlight);   // a consumer recorded them, and had not applied them when the baseline read
        history.record(older);
        applier.apply(Operation.assign("order-1", 6_000, "coupon", new BsonString("NONE")));   // unrecorded: H = 6000

        history.baseline(() -> true);
        applier.apply(inFlight);
        applier.apply(older);

        List<Operation> all = plus(beforeTheHistory(), inFlight, older,
                Operation.assign("order-1", 6_000, "coupon", new BsonString("NONE")));
        assertThat(history.asOf("order-1", 6_000).value()).as("both below the horizon, merged")
                .contains(oracle(all, 6_000)).contains(liveState());
    }

    @Test
    void an_old_operation_delivered_for_the_first_time_after_the_baseline_is_merged_and_a_redelivery_changes_nothing() {
        List<Operation> before = beforeTheHistory();
        before.stream().filter(op -> op.seq() != 1).forEach(applier::apply);   // add sku-1 (seq 1) was still on its way
        history.baseline(() -> true);
        EntityState taken = history.asOf("order-1", 7).value().orElseThrow();

        recording.apply(before.get(1));   // a redelivery of add sku-2, applied before the history was on
        assertThat(history.asOf("order-1", 7).value()).as("a redelivery changes nothing").contains(taken);
        recording.apply(before.get(0));   // add sku-1, seq 1, for the first time

        assertThat(history.asOf("order-1", 7).value()).contains(oracle(before, 7)).contains(liveState());
        assertThat(history.versions("order-1").late()).isEmpty();
    }

    @Test
    void an_operation_applied_without_recording_after_the_baseline_makes_reads_unknowable_until_a_pass_joins_it_in() {
        beforeTheHistory().forEach(applier::apply);
        history.baseline(() -> true);
        Operation straggler = Operation.add("order-1", 9, "items", "sku-7");   // an instance still without the history
        applier.apply(straggler);
        recording.apply(status(10, "delivered"));

        assertThat(history.asOf("order-1", 10)).isInstanceOfSatisfying(Read.Unknowable.class, r ->
                assertThat(r.reason()).contains("element 'sku-7' of 'items' written by seq 9"));
        assertThat(history.baseline(() -> true)).isEqualTo(new BaselinePass(1, 0, 1, 0, 0, true));

        List<Operation> all = plus(beforeTheHistory(), straggler, status(10, "delivered"));
        assertThat(history.asOf("order-1", 10).value()).contains(oracle(all, 10)).contains(liveState());
        assertThat(history.asOf("order-1", 9)).as("the joined horizon").isInstanceOf(Read.Unknowable.class);
    }

    @Test
    void a_repeated_baseline_changes_nothing() {
        beforeTheHistory().forEach(applier::apply);
        applier.apply(Operation.add("order-2", 3, "items", "sku-1"));
        history.baseline(() -> true);
        recording.apply(status(8, "shipped"));
        List<BsonDocument> taken = records.find().into(new ArrayList<>());

        assertThat(history.baseline(() -> true)).isEqualTo(new BaselinePass(2, 0, 0, 2, 0, true));
        assertThat(records.find().into(new ArrayList<>())).isEqualTo(taken);
    }

    @Test
    void a_baseline_joins_a_state_retention_folded_from_records_that_did_not_start_from_an_empty_document() {
        beforeTheHistory().forEach(applier::apply);
        recording.apply(status(8, "shipped"));
        recording.apply(Operation.add("order-1", 9, "items", "sku-4"));
        clock.advance(Duration.ofDays(2));
        recording.apply(status(10, "delivered"));
        history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);   // folded seqs 8 and 9 alone

        assertThat(history.asOf("order-1", 10)).as("the live document's items 1, 2 are recorded nowhere")
                .isInstanceOf(Read.Unknowable.class);
        assertThat(history.baseline(() -> true).joined()).isEqualTo(1);

        List<Operation> all = plus(beforeTheHistory(), status(8, "shipped"), Operation.add("order-1", 9, "items", "sku-4"),
                status(10, "delivered"));
        assertThat(history.asOf("order-1", 10).value()).contains(oracle(all, 10)).contains(liveState());
    }

    @Test
    void where_compaction_had_dropped_tombstones_before_the_baseline_a_state_is_known_only_after_a_delete_above_them() {
        compactedThenBaselined();
        recording.apply(status(8, "shipped"));

        assertThat(history.asOf("order-1", 8)).as("the tombstone of sku-3 is gone: the history cannot tell it")
                .isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason())
                        .contains("compaction had dropped tombstones of 'order-1' up to seq 5"));
        Operation delete = Operation.delete("order-1", 9);
        recording.apply(delete);
        recording.apply(Operation.add("order-1", 10, "items", "sku-5"));

        List<Operation> all = plus(beforeTheHistory(), status(8, "shipped"), delete,
                Operation.add("order-1", 10, "items", "sku-5"));
        assertThat(history.asOf("order-1", 10).value()).contains(oracle(all, 10)).contains(liveState());
    }

    @Test
    void an_add_below_the_compaction_floor_the_baseline_found_cannot_be_judged_and_a_rebuild_leaves_its_entity_out() {
        compactedThenBaselined();
        recording.apply(Operation.add("order-1", 4, "items", "sku-3"));   // a redelivery: its tombstone is gone

        assertThat(history.versions("order-1").late()).extracting(Operation::seq).containsExactly(4L);
        Rebuild rebuild = history.rebuild(GuardedApplier.create(db.getCollection("rebuilt", BsonDocument.class), ORDERS));
        assertThat(rebuild.complete()).isFalse();
        assertThat(rebuild.unrestored()).isEqualTo(1);
        assertThat(rebuild.reasons()).singleElement().asString().contains("below the compaction floor 5");
        assertThat(db.getCollection("rebuilt").countDocuments()).as("nothing written rather than a guess").isZero();
    }

    /**
     * order-1 consumed without the history (sku-1 at 1, paid at 5) and baselined; then an instance still without the
     * history applies remove sku-1 (seq 3, late), and compaction drops its tombstone: {@code _gcFloor} 3.
     */
    private List<Operation> anUnrecordedRemoveCompactedAfterTheBaseline() {
        List<Operation> all = List.of(Operation.add("order-1", 1, "items", "sku-1"), status(5, "paid"),
                Operation.remove("order-1", 3, "items", "sku-1"));
        applier.apply(all.get(0));
        applier.apply(all.get(1));
        history.baseline(() -> true);
        applier.apply(all.get(2));
        live.updateOne(new BsonDocument("_id", new BsonString("order-1")), BsonDocument.parse(
                "{$pull: {deleted_items: {sku: 'sku-1'}}, $set: {_gcFloor: {$numberLong: '3'}},"
                        + " $inc: {_v: {$numberLong: '1'}}}"));   // as TombstoneCompactor does after its grace
        return all;
    }

    @Test
    void an_unrecorded_remove_whose_tombstone_compaction_dropped_after_the_baseline_reads_unknowable_even_after_a_pass() {
        anUnrecordedRemoveCompactedAfterTheBaseline();

        assertThat(history.asOf("order-1", 5)).as("sku-1 was removed by an operation the history never saw")
                .isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason())
                        .contains("_gcFloor written by seq 3"));
        assertThat(history.baseline(() -> true).joined()).as("its compaction floor joined in").isEqualTo(1);
        assertThat(history.asOf("order-1", 5)).isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason())
                .contains("compaction had dropped tombstones of 'order-1' up to seq 3"));
    }

    @Test
    void a_rebuild_leaves_out_an_entity_whose_latest_state_compaction_left_unknowable() {
        anUnrecordedRemoveCompactedAfterTheBaseline();
        history.baseline(() -> true);

        Rebuild rebuild = history.rebuild(GuardedApplier.create(db.getCollection("rebuilt", BsonDocument.class), ORDERS));

        assertThat(rebuild.complete()).isFalse();
        assertThat(rebuild.reasons()).singleElement().asString().contains("up to seq 3");
        assertThat(db.getCollection("rebuilt").countDocuments()).as("not sku-1 brought back").isZero();
    }

    @Test
    void retention_after_the_baseline_folds_the_merged_records_and_later_ones_below_its_horizon_are_still_merged() {
        List<Operation> before = beforeTheHistory();
        before.stream().filter(op -> op.seq() != 2).forEach(applier::apply);   // add sku-2 still on its way
        history.baseline(() -> true);
        recording.apply(before.get(0));   // a redelivery
        recording.apply(status(8, "shipped"));
        clock.advance(Duration.ofDays(2));
        recording.apply(status(9, "delivered"));
        assertThat(history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true).folded()).isEqualTo(2);

        recording.apply(before.get(1));   // add sku-2 at last, long after: below both horizons
        List<Operation> all = plus(before, status(8, "shipped"), status(9, "delivered"));

        Versions versions = history.versions("order-1");
        assertThat(versions.baseline()).as("the baseline's mark survives the fold").isTrue();
        assertThat(versions.horizon()).isEqualTo(8);
        assertThat(history.asOf("order-1", 9).value()).contains(oracle(all, 9)).contains(liveState());
        assertThat(history.asOf("order-1", 7)).isInstanceOf(Read.Unknowable.class);
    }

    @Test
    void a_rebuild_leaves_out_an_entity_whose_live_document_its_history_cannot_explain_and_says_why() {
        beforeTheHistory().forEach(applier::apply);
        history.baseline(() -> true);
        applier.apply(status(8, "shipped"));   // an instance still without the history
        recording.apply(Operation.add("order-2", 1, "items", "sku-1"));   // recorded from its first operation

        Rebuild rebuild = history.rebuild(GuardedApplier.create(db.getCollection("rebuilt", BsonDocument.class), ORDERS));

        assertThat(rebuild.complete()).isFalse();
        assertThat(rebuild.unrestored()).isEqualTo(1);
        assertThat(rebuild.reasons()).singleElement().asString().contains("'order-1'").contains("no record accounts for");
        assertThat(EntityState.readAll(db.getCollection("rebuilt", BsonDocument.class).find(), ORDERS))
                .as("order-2 only").containsOnlyKeys("order-2");
    }

    @Test
    void after_the_baseline_a_rebuild_into_a_new_collection_equals_the_live_one() {
        beforeTheHistory().forEach(applier::apply);
        history.baseline(() -> true);
        recording.apply(status(8, "shipped"));
        recording.apply(Operation.remove("order-1", 9, "items", "sku-1"));

        MongoCollection<BsonDocument> copy = db.getCollection("rebuilt", BsonDocument.class);
        assertThat(history.rebuild(GuardedApplier.create(copy, ORDERS)).complete()).isTrue();
        assertThat(EntityState.readAll(copy.find(), ORDERS)).isEqualTo(EntityState.readAll(live.find(), ORDERS));
    }

    @Test
    void a_live_document_the_baseline_cannot_read_is_not_taken_in_and_says_why_and_the_pass_takes_the_others() {
        applier.apply(Operation.add("order-0", 1, "items", "sku-1"));
        live.insertOne(BsonDocument.parse("{_id: 'order-1', items: [{sku: 'sku-1', seq: {$numberLong: '2'}}],"
                + " deleted_items: [], _seq: {}, _floor: {$numberLong: '0'}, _gcFloor: {$numberLong: '0'},"
                + " _v: {$numberLong: '1'}}"));
        applier.apply(Operation.add("order-1", 3, "items", "sku-2"));
        // another program then writes a stray entry (the applier refuses to write past one, so it comes last)
        live.updateOne(com.mongodb.client.model.Filters.eq("_id", "order-1"), com.mongodb.client.model.Updates.pushEach(
                "items", java.util.List.of(new org.bson.BsonString("stray")),
                new com.mongodb.client.model.PushOptions().position(0)));
        applier.apply(Operation.add("order-2", 1, "items", "sku-1"));

        assertThat(history.baseline(() -> true)).isEqualTo(new BaselinePass(3, 2, 0, 0, 1, true));
        assertThat(history.versions("order-2").baseline()).isTrue();
        assertThat(history.asOf("order-1", 3)).isInstanceOfSatisfying(Read.Unknowable.class, r -> assertThat(r.reason())
                .contains("could not read the live document of 'order-1'").contains("'items' entry 0 is a string"));
        Rebuild rebuild = history.rebuild(GuardedApplier.create(db.getCollection("rebuilt", BsonDocument.class), ORDERS));
        assertThat(rebuild.unrestored()).isEqualTo(1);
        assertThat(rebuild.reasons()).singleElement().asString().contains("'order-1'");
    }

    @Test
    void once_the_document_is_repaired_a_pass_takes_it_in() {
        live.insertOne(BsonDocument.parse("{_id: 'order-1', items: [{sku: 7, seq: {$numberLong: '1'}}],"
                + " deleted_items: [], _seq: {}, _floor: {$numberLong: '0'}, _gcFloor: {$numberLong: '0'},"
                + " _v: {$numberLong: '1'}}"));
        applier.apply(Operation.add("order-1", 2, "items", "sku-2"));
        assertThat(history.baseline(() -> true).unreadable()).isEqualTo(1);

        live.updateOne(new BsonDocument("_id", new BsonString("order-1")), BsonDocument.parse(
                "{$pull: {items: {sku: 7}}}"));   // repaired by hand
        assertThat(history.baseline(() -> true)).isEqualTo(new BaselinePass(1, 0, 1, 0, 0, true));

        assertThat(history.asOf("order-1", 2).value()).contains(liveState());
    }

    @Test
    void the_baseline_needs_the_live_collection_and_an_applier_of_another_collection_is_refused() {
        History recordsOnly = History.of(records, ORDERS);
        assertThatThrownBy(() -> recordsOnly.baseline(() -> true)).hasMessageContaining("History.withLive");
        assertThatThrownBy(() -> history.recording(GuardedApplier.create(db.getCollection("carts", BsonDocument.class),
                ORDERS))).hasMessageContaining("the history is the history of").hasMessageContaining("carts");
    }

    /** {@code leases}, whose leases say they are lost once asked whether they are held {@code held} times. */
    static LeaseProvider losingAfter(LeaseProvider leases, int held) {
        AtomicInteger asked = new AtomicInteger();
        return (resource, owner) -> leases.tryAcquire(resource, owner).map(lease -> (Lease) Proxy.newProxyInstance(
                Lease.class.getClassLoader(), new Class<?>[] {Lease.class}, (proxy, method, args) -> {
                    if (method.getName().equals("isHeld") && asked.incrementAndGet() > held) {
                        return false;
                    }
                    try {
                        return method.invoke(lease, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                }));
    }

    @Test
    void the_leased_baseline_resumes_where_a_stopped_pass_left_off_and_runs_no_more_once_complete() {
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            ops.add(Operation.add(String.format("order-%03d", i), 1, "items", "sku-1"));
        }
        applier.applyAll(ops);
        MongoLeaseProvider leases = MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class),
                LeaseOptions.ofDefaults().withClock(clock));
        HistoryBaseline first = HistoryBaseline.create(history, losingAfter(leases, 15), "a", Duration.ofMinutes(1));
        HistoryBaseline second = HistoryBaseline.create(history, leases, "b", Duration.ofMinutes(1));

        assertThat(first.runIfDue()).as("its lease lost after 15 entities").contains(new BaselinePass(15, 15, 0, 0, 0, false));
        assertThat(second.runIfDue()).as("a pass began within the interval").isEmpty();
        clock.advance(Duration.ofMinutes(2));
        assertThat(second.runIfDue()).as("resumed after the 15th").contains(new BaselinePass(15, 15, 0, 0, 0, true));
        assertThat(second.complete()).isTrue();
        clock.advance(Duration.ofMinutes(2));
        HistoryBaseline third = HistoryBaseline.create(history, leases, "c", Duration.ofMinutes(1));
        assertThat(third.runIfDue()).as("complete: no pass").isEmpty();
        assertThat(third.complete()).isTrue();
        assertThat(records.countDocuments(Filters.exists("_id.entity"))).isEqualTo(30);
        assertThat(history.options().meters().get("orderless.history.baseline.entities").tag("outcome", "baselined")
                .counter().count()).isEqualTo(30);
    }
}
