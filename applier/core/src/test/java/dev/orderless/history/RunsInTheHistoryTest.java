package dev.orderless.history;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A counter's runs of increments in the version history (issue 50, from its second review): late operations and
 * increments applied without recording around runs, repeated baseline passes, rebuilds beside consumers and of long
 * runs, runs and deletes at the ends of the seqs, and a hot counter's folded history as small as its live document.
 */
@ExtendWith(MongoExtension.class)
class RunsInTheHistoryTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().counter("cents").register("name").build();

    private final ManualClock clock = new ManualClock();
    private MongoDatabase db;
    private MongoCollection<BsonDocument> live;
    private GuardedApplier applier;

    @BeforeEach
    void setUp(MongoDatabase db) {
        this.db = db;
        live = db.getCollection("accounts", BsonDocument.class);
        applier = GuardedApplier.create(live, SCHEMA, ApplierOptions.ofDefaults().withClock(clock));
    }

    /** Increments of 1 at seqs 1 to 20, folded by the live document's compaction: {@code _incFloor} 20. */
    private void foldedUpTo20() {
        for (long seq = 1; seq <= 20; seq++) {
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        clock.advance(Duration.ofHours(2));
        TombstoneCompactor.create(live, SCHEMA, Duration.ofHours(1), ApplierOptions.ofDefaults().withClock(clock))
                .compact("e");
    }

    /** An applier on {@code copy}, which a complete rebuild from {@code history} wrote. */
    private static GuardedApplier rebuiltFrom(History history, MongoCollection<BsonDocument> copy) {
        GuardedApplier target = GuardedApplier.create(copy, SCHEMA);
        assertThat(history.rebuild(target).complete()).isTrue();
        return target;
    }

    private History baselined() {
        History history = History.of(db.getCollection("accounts_history", BsonDocument.class), SCHEMA).withLive(live);
        history.beginBaseline(HistoryBaseline.Start.DETECT);
        history.baseline(() -> true);
        return history;
    }

    private EntityState liveState() {
        return EntityState.of(live.find(eq("_id", "e")).first(), SCHEMA);
    }

    /**
     * A consumer that does not record (a rolling upgrade's older instance) applies increments after the baseline; the
     * increment that coalesces them is recorded. The live document shows only the run's two ends, both accounted for,
     * so the history vouches for a state without the 249 increments it never saw.
     */
    @Test
    void increments_applied_without_recording_inside_a_run_are_never_answered_known_without() {
        applier.apply(Operation.increment("e", 1, "cents", 1));
        History history = baselined();
        for (long seq = 2; seq <= 250; seq++) {
            applier.apply(Operation.increment("e", seq, "cents", 1));   // not recorded
        }
        assertThat(history.recording(applier).apply(Operation.increment("e", 251, "cents", 1)))
                .isEqualTo(Outcome.APPLIED);
        assertThat(live.find(eq("_id", "e")).first().toJson()).as("coalesced into one run").contains("_incRuns");

        Read<EntityState> read = history.asOf("e", 251);
        if (read instanceof Read.Known<EntityState> known) {
            assertThat(known.answer()).as("Known, so the live state (251)").isEqualTo(liveState());
        }
    }

    /**
     * Then the repair history.md names: a repeated baseline pass joins the live document in. The join takes the live
     * document's pending increments but not its runs, so the entity stays unexplained whatever the passes.
     */
    @Test
    void a_repeated_baseline_pass_joins_in_a_run_applied_without_recording() {
        applier.apply(Operation.increment("e", 1, "cents", 1));
        History history = baselined();
        for (long seq = 2; seq <= 251; seq++) {
            applier.apply(Operation.increment("e", seq, "cents", 1));   // not recorded: run [1..251]
        }
        assertThat(history.asOf("e", 251)).isInstanceOf(Read.Unknowable.class);

        history.baseline(() -> true);

        assertThat(history.asOf("e", 251).value()).as("joined: Known from its new horizon").contains(liveState());
    }

    /**
     * A rebuilt collection redelivered every seq of a run: the live one calls each a duplicate (inside a run), and so
     * does the rebuilt one, which holds the run as a run (stand-in increments per seq made some seq collisions).
     */
    @Test
    void a_rebuilt_collection_calls_every_seq_of_a_run_delivered_again_a_duplicate_as_the_live_one_does() {
        for (long seq = 1; seq <= 300; seq++) {
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        History history = baselined();
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = rebuiltFrom(history, copy);

        Map<Outcome, Integer> onLive = new TreeMap<>();
        Map<Outcome, Integer> onTarget = new TreeMap<>();
        for (long seq = 1; seq <= 300; seq++) {
            Operation again = Operation.increment("e", seq, "cents", 1);
            onLive.merge(applier.apply(again), 1, Integer::sum);
            onTarget.merge(target.apply(again), 1, Integer::sum);
        }
        assertThat(onLive).isEqualTo(Map.of(Outcome.DUPLICATE, 300));
        assertThat(onTarget).as("rebuilt").isEqualTo(onLive);
    }

    /**
     * Rebuilder's promise: a rebuild "can run while consumers run". A consumer redelivers seq 1 of a run (a duplicate on
     * the live document) to the new collection before the rebuild writes the run: the run takes its place, so the
     * rebuilt counter holds the live one's 300 (a stand-in for seq 1 carrying the run's sum collided with it: 1).
     */
    @Test
    void a_rebuild_beside_a_consumer_that_redelivers_a_seq_of_a_run_keeps_the_runs_sum() {
        for (long seq = 1; seq <= 300; seq++) {
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        History history = baselined();
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = GuardedApplier.create(copy, SCHEMA);
        assertThat(target.apply(Operation.increment("e", 1, "cents", 1))).as("the consumer, first")
                .isEqualTo(Outcome.APPLIED);

        Rebuild rebuild = history.rebuild(target);

        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA))
                .as("rebuilt (rebuild complete: %s)", rebuild.complete()).isEqualTo(liveState());
    }

    /**
     * The fold's own seq delivered again: the live document folded it (BEYOND_HORIZON, dead-lettered as the grace
     * promises); so does the rebuilt one, which the rebuild gave the fold too (a stand-in increment at that seq, with
     * the whole folded sum as its delta, made it a seq collision there).
     */
    @Test
    void a_rebuilt_collection_answers_the_folds_own_seq_delivered_again_as_the_live_one_does() {
        foldedUpTo20();
        History history = baselined();
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = rebuiltFrom(history, copy);

        Operation again = Operation.increment("e", 20, "cents", 1);
        assertThat(target.apply(again)).as("rebuilt").isEqualTo(applier.apply(again));
    }

    /**
     * A rebuild whose batch failed for the fold's stand-in increment (a connection it drops): the fold is raised on
     * the target before the failed increment is applied again, so the retry lands at or below the target's
     * {@code _incFloor} and is refused as beyond the horizon: the folded sum is lost, and the rebuild says complete.
     */
    @Test
    void a_rebuild_that_retries_a_folds_increment_keeps_the_folded_sum(MongoBackend backend) {
        for (long seq = 1; seq <= 20; seq++) {
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        applier.apply(Operation.assign("e", 21, "name", new BsonString("Ada")));
        clock.advance(Duration.ofHours(2));
        TombstoneCompactor.create(live, SCHEMA, Duration.ofHours(1), ApplierOptions.ofDefaults().withClock(clock))
                .compact("e");   // _incFloor 20, cents 20
        History history = baselined();

        String[] host = new ConnectionString(backend.connectionString()).getHosts().get(0).split(":");
        try (TcpProxy proxy = TcpProxy.start(host[0], host.length > 1 ? Integer.parseInt(host[1]) : 27017);
             MongoClient through = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString("mongodb://127.0.0.1:" + proxy.port()
                             + "/?directConnection=true&serverSelectionTimeoutMS=2000&socketTimeoutMS=3000"))
                     .addCommandListener(new CommandListener() {
                         @Override
                         public void commandStarted(CommandStartedEvent event) {
                             if (event.getCommandName().equals("update") && raisesAFold(event.getCommand())) {
                                 proxy.dropWhenClientSends("");   // MongoDB answers again from the raise on
                             }
                         }
                     }).build())) {
            proxy.dropWhenClientSends("_inc.cents.249");   // every blind increment of the counter: its connection drops
            MongoCollection<BsonDocument> copy = through.getDatabase(db.getName())
                    .getCollection("accounts_rebuilt", BsonDocument.class);
            Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, SCHEMA));

            EntityState rebuilt = EntityState.of(db.getCollection("accounts_rebuilt", BsonDocument.class)
                    .find(eq("_id", "e")).first(), SCHEMA);
            assertThat(rebuilt.equals(liveState()) || !rebuild.complete())
                    .as("rebuilt %s (live %s), %s: exact, or the rebuild says it is not", rebuilt, liveState(), rebuild)
                    .isTrue();
        }
    }

    /**
     * A run that ends at the largest seq (the applier takes it: {@code CounterBook.coalesced} and {@code Ledger.inRun}
     * guard that end): the rebuild's stand-in increments count {@code seq++} up to {@code hi} inclusive, which passes
     * {@code Long.MAX_VALUE} to a negative seq, and the whole rebuild ends in "seq must be positive".
     */
    @Test
    void a_collection_rebuilt_over_a_run_that_ends_at_the_largest_seq_is_rebuilt() {
        for (long seq = Long.MAX_VALUE - 250; seq > 0; seq++) {   // to Long.MAX_VALUE inclusive
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        assertThat(live.find(eq("_id", "e")).first().toJson()).as("coalesced into a run").contains("_incRuns");
        History history = baselined();
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);

        assertThat(history.rebuild(GuardedApplier.create(copy, SCHEMA)).complete()).isTrue();
        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA)).isEqualTo(liveState());
    }

    /**
     * A hot counter's run (the benchmark keeps 1,000,000 increments in runs within the grace) is rebuilt as one
     * stand-in increment per seq, all of one entity in one {@code applyAll}: each round coalesces once and sends every
     * increment left as a blind write, 250 of which find room, so the statements sent grow with the square of the
     * run. Measured on the embedded server: 2,000 seqs 3.4 s, 4,000 4.9 s, 8,000 13.8 s, 16,000 47.1 s (about two days
     * for a million). Here: the update statements a rebuild of a run of 4,000 sends, at most two per increment.
     */
    @Test
    void a_collection_rebuilt_over_a_long_run_sends_work_linear_in_its_length(MongoBackend backend) {
        long n = 4_000;
        live.insertOne(new BsonDocument("_id", new BsonString("e")).append("cents", new org.bson.BsonInt64(n))
                .append("_incRuns", new BsonDocument("cents", new org.bson.BsonArray(java.util.List.of(
                        new BsonDocument("seq", new org.bson.BsonInt64(1)).append("hi", new org.bson.BsonInt64(n))
                                .append("d", new org.bson.BsonInt64(n)).append("at", new org.bson.BsonDateTime(0))))))
                .append("_floor", new org.bson.BsonInt64(0)).append("_gcFloor", new org.bson.BsonInt64(0))
                .append("_v", new org.bson.BsonInt64(n)));   // what the applier leaves after n increments, coalesced
        History history = baselined();
        java.util.concurrent.atomic.LongAdder statements = new java.util.concurrent.atomic.LongAdder();
        try (MongoClient counting = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString()))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (event.getCommandName().equals("update")) {
                            statements.add(event.getCommand().getArray("updates").size());
                        }
                    }
                }).build())) {
            MongoCollection<BsonDocument> copy = counting.getDatabase(db.getName())
                    .getCollection("accounts_rebuilt", BsonDocument.class);
            assertThat(history.rebuild(GuardedApplier.create(copy, SCHEMA)).complete()).isTrue();
            assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA)).isEqualTo(liveState());
        }
        assertThat(statements.sum()).as("update statements sent for a run of %d", n).isLessThanOrEqualTo(2 * n);
    }

    /**
     * A run of two increments of {@code Long.MIN_VALUE} (a delta the applier takes): its sum, -2^64, is exactly what two
     * increments carry, but {@code Ledger.foldPastALong} bounds a run's sum by {@code seqs * Long.MAX_VALUE} on both
     * sides, so the rebuild leaves the entity out, saying its run is "more than as many increments can carry".
     */
    @Test
    void a_collection_rebuilt_over_a_run_of_the_smallest_deltas_is_rebuilt() {
        applier.apply(Operation.increment("e", 1, "cents", Long.MIN_VALUE));
        applier.apply(Operation.increment("e", 2, "cents", Long.MIN_VALUE));
        for (long seq = 4; seq <= 500; seq += 2) {   // 249 more, none next to another: runs of one, coalesced at 500
            applier.apply(Operation.increment("e", seq, "cents", 0));
        }
        assertThat(live.find(eq("_id", "e")).first().toJson()).as("coalesced into runs").contains("_incRuns");
        History history = baselined();
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);

        Rebuild rebuild = history.rebuild(GuardedApplier.create(copy, SCHEMA));

        assertThat(rebuild.complete()).as("%s", rebuild).isTrue();
        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA)).isEqualTo(liveState());
    }

    /**
     * Issue 50 bounds a hot counter's live document by keeping its increments in runs; the history's folded state still
     * lists each increment retention folds while the live document has not folded it ({@code cuts}: at most its
     * {@code _incFloor}), about 31.5 bytes each (measured: 20,000 increments, a folded record of 629,083 bytes, the live
     * document 11,308). A million within the grace (the benchmark) is about 31 MB: past MongoDB's 16 MB, so the
     * folded record can no longer be written. Here: 5,000 increments, the folded record at most twice the live document.
     */
    @Test
    void a_hot_counters_folded_history_stays_as_small_as_its_live_document() {
        History history = HistoryTest.fromTheStart(db.getCollection("accounts_history", BsonDocument.class), live,
                SCHEMA, HistoryOptions.ofDefaults().withClock(clock));
        RecordingApplier recording = history.recording(applier);
        java.util.List<Operation> batch = new java.util.ArrayList<>();
        for (long seq = 1; seq <= 5_000; seq++) {
            batch.add(Operation.increment("e", seq, "cents", 1));
            if (batch.size() == 50) {
                recording.applyAll(batch);
                batch.clear();
            }
        }
        clock.advance(Duration.ofDays(2));   // past the history's retention, within the live document's grace
        assertThat(history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true).complete()).isTrue();

        BsonDocument folded = db.getCollection("accounts_history", BsonDocument.class)
                .find(eq("_id.entity", "e")).first();
        assertThat(bytes(folded)).as("the folded record's bytes").isLessThanOrEqualTo(
                2 * bytes(live.find(eq("_id", "e")).first()));
    }

    /**
     * A delete at the largest seq, folded by retention: {@code Ledger.after} keeps the increments and runs above it with
     * {@code tailMap(delete.seq() + 1)}, which wraps to {@code tailMap(Long.MIN_VALUE)} and keeps them all; the folded
     * state's counters are read from the ledger ({@code Records.stateOf}), so the history answers Known with the counter
     * the delete removed (the live document has none).
     */
    @Test
    void a_delete_at_the_largest_seq_folded_by_retention_leaves_no_counter() {
        History history = HistoryTest.fromTheStart(db.getCollection("accounts_history", BsonDocument.class), live,
                SCHEMA, HistoryOptions.ofDefaults().withClock(clock));
        RecordingApplier recording = history.recording(applier);
        for (long seq = 1; seq <= 300; seq++) {
            recording.apply(Operation.increment("e", seq, "cents", 1));   // in runs and pending
        }
        assertThat(recording.apply(Operation.delete("e", Long.MAX_VALUE))).isEqualTo(Outcome.APPLIED);
        assertThat(liveState().counters()).as("live").isEmpty();
        clock.advance(Duration.ofDays(2));
        assertThat(history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true).complete()).isTrue();

        assertThat(history.asOf("e", Long.MAX_VALUE).value()).as("Known, so the live state").contains(liveState());
    }

    /**
     * A run of one seq at the largest seq (an increment at {@code Long.MAX_VALUE} next to none, coalesced): {@code
     * Ledger.inRun} looks among {@code runs.headMap(seq)} for {@code Long.MAX_VALUE}, which leaves out the run that starts
     * there, so the baseline's own ledger does not account for the seq its live document shows, and no read of the
     * entity is ever answered.
     */
    @Test
    void a_baseline_over_a_run_that_starts_at_the_largest_seq_answers_from_its_horizon() {
        for (long seq = 2; seq <= 500; seq += 2) {   // 250 pending, none next to another
            applier.apply(Operation.increment("e", seq, "cents", 1));
        }
        applier.apply(Operation.increment("e", Long.MAX_VALUE, "cents", 1));   // coalesces: [MAX..MAX] among them
        assertThat(live.find(eq("_id", "e")).first().toJson()).as("coalesced into runs").contains("_incRuns");

        Read<EntityState> read = baselined().asOf("e", Long.MAX_VALUE);
        assertThat(read.value()).as("Known from the baseline's horizon: %s", read).contains(liveState());
    }

    private static int bytes(BsonDocument doc) {
        return new org.bson.RawBsonDocument(doc, new org.bson.codecs.BsonDocumentCodec()).getByteBuffer().remaining();
    }

    private static boolean raisesAFold(BsonDocument command) {
        for (BsonValue update : command.getArray("updates", new org.bson.BsonArray())) {
            BsonValue u = update.asDocument().get("u");
            if (u != null && u.isDocument() && u.asDocument().containsKey("$set")
                    && u.asDocument().getDocument("$set").containsKey("_incFloor.cents")) {
                return true;
            }
        }
        return false;
    }

    /** Increments of 1 at seqs 1 to 300 but {@code skipped}, before the history is on; then its baseline. */
    private History baselineOver(long skipped) {
        for (long seq = 1; seq <= 300; seq++) {
            if (seq != skipped) {
                applier.apply(Operation.increment("e", seq, "cents", 1));
            }
        }
        assertThat(live.find(eq("_id", "e")).first()).as("coalesced into runs").containsKey("_incRuns");
        return baselined();
    }

    @Test
    void a_late_increment_in_a_gap_between_runs_is_merged_as_the_live_document_counts_it() {
        History history = baselineOver(50);

        assertThat(history.recording(applier).apply(Operation.increment("e", 50, "cents", 1000)))
                .isEqualTo(Outcome.APPLIED);

        assertThat(liveState().counters().get("cents")).hasToString("1299");
        assertThat(history.asOf("e", 300).value()).as("Known, and the live state").contains(liveState());
    }

    @Test
    void a_late_delete_in_a_gap_between_runs_is_merged_as_the_live_document_applies_it() {
        History history = baselineOver(50);

        assertThat(history.recording(applier).apply(Operation.delete("e", 50))).isEqualTo(Outcome.APPLIED);

        assertThat(liveState().counters().get("cents")).hasToString("250");
        assertThat(history.asOf("e", 300).value()).as("Known, and the live state").contains(liveState());
    }

    @Test
    void a_collection_rebuilt_over_runs_counts_a_seq_delivered_again_once_as_the_live_one_does() {
        History history = baselineOver(0);
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = rebuiltFrom(history, copy);

        Operation again = Operation.increment("e", 30, "cents", 1);
        assertThat(applier.apply(again)).as("live").isEqualTo(Outcome.DUPLICATE);
        assertThat(target.apply(again)).as("rebuilt").isEqualTo(Outcome.DUPLICATE);
        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA)).isEqualTo(liveState());
    }

    @Test
    void a_collection_rebuilt_over_a_compaction_fold_refuses_a_seq_delivered_again_as_the_live_one_does() {
        foldedUpTo20();
        History history = baselined();
        MongoCollection<BsonDocument> copy = db.getCollection("accounts_rebuilt", BsonDocument.class);
        GuardedApplier target = rebuiltFrom(history, copy);

        Operation again = Operation.increment("e", 7, "cents", 1);
        assertThat(applier.apply(again)).as("live").isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(target.apply(again)).as("rebuilt: not counted a second time").isEqualTo(Outcome.BEYOND_HORIZON);
        assertThat(EntityState.of(copy.find(eq("_id", "e")).first(), SCHEMA)).isEqualTo(liveState());
    }
}
