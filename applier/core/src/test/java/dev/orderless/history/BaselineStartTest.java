package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.history.HistoryBaseline.Begun;
import dev.orderless.history.HistoryBaseline.Start;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How a history starts on its live collection ({@link History#beginBaseline}): an empty one needs no baseline, one
 * consumed without the history needs one, and one whose history has been on since its first write must not get one
 * (its recorded versions would become unknowable) and cannot be told from the other, so it is asked.
 */
@ExtendWith(MongoExtension.class)
class BaselineStartTest {
    private static final ReferenceModel ORACLE = new ReferenceModel(BaselineTest.ORDERS);
    private static final List<Operation> ORDER = List.of(Operation.add("order-1", 1, "items", "sku-1"),
            Operation.assign("order-1", 2, "status", new BsonString("placed")),
            Operation.assign("order-1", 3, "status", new BsonString("paid")));

    private final ManualClock clock = new ManualClock();
    private MongoDatabase db;
    private History history;
    private RecordingApplier recording;   // and its applier, which applies without recording

    @BeforeEach
    void setUp(MongoDatabase db) {
        this.db = db;
        history = history();
        recording = history.recording(GuardedApplier.create(db.getCollection("orders", BsonDocument.class),
                BaselineTest.ORDERS));
    }

    /** The history as another process would make it: nothing remembered. */
    private History history() {
        return History.of(db.getCollection("orders_history", BsonDocument.class), BaselineTest.ORDERS,
                HistoryOptions.ofDefaults().withClock(clock)).withLive(db.getCollection("orders", BsonDocument.class));
    }

    private HistoryBaseline baseline(History of, String owner) {
        return HistoryBaseline.create(of, MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class),
                LeaseOptions.ofDefaults().withClock(clock)), owner, Duration.ofMinutes(1));
    }

    private static EntityState oracle(long upTo) {
        return ORACLE.replay(ORDER.stream().filter(op -> op.seq() <= upTo).toList()).get("order-1");
    }

    @Test
    void on_an_empty_collection_the_baseline_is_complete_at_once_and_takes_in_nothing_written_after() {
        HistoryBaseline baseline = baseline(history, "a");

        assertThat(history.beginBaseline(Start.DETECT)).isEqualTo(Begun.COMPLETE);
        ORDER.forEach(recording::apply);   // the consumers, started after
        clock.advance(Duration.ofMinutes(2));

        assertThat(baseline.runIfDue()).isEmpty();
        assertThat(history.versions("order-1").baseline()).isFalse();
        assertThat(history.asOf("order-1", 2).value()).contains(oracle(2));
    }

    @Test
    void on_a_collection_consumed_without_the_history_detect_begins_a_baseline_and_a_pass_completes_it() {
        ORDER.forEach(recording.applier()::apply);
        HistoryBaseline baseline = baseline(history, "a");

        assertThat(history.beginBaseline(Start.DETECT)).isEqualTo(Begun.UNDER_WAY);
        assertThat(history.baselineComplete()).isFalse();
        assertThat(baseline.runIfDue()).hasValueSatisfying(pass -> assertThat(pass.baselined()).isEqualTo(1));

        assertThat(history().baselineComplete()).as("known to any process").isTrue();
    }

    @Test
    void a_baseline_begun_by_one_process_is_under_way_for_the_next_even_once_its_consumers_recorded() {
        ORDER.subList(0, 2).forEach(recording.applier()::apply);
        assertThat(history.beginBaseline(Start.DETECT)).isEqualTo(Begun.UNDER_WAY);
        recording.apply(ORDER.get(2));   // its consumers record: the history is not empty any more

        assertThat(history().beginBaseline(Start.DETECT)).isEqualTo(Begun.UNDER_WAY);
    }

    @Test
    void a_history_on_since_the_first_write_of_a_collection_with_data_is_undecided_and_nothing_is_written() {
        ORDER.forEach(recording::apply);   // recorded from the first write, by a version that kept no baseline status

        assertThat(history.beginBaseline(Start.DETECT)).isEqualTo(Begun.UNDECIDED);
        assertThat(history.asOf("order-1", 2)).as("until it is decided").isInstanceOf(Read.Unknowable.class);
        assertThat(history.collection().countDocuments()).as("its three records alone").isEqualTo(3);
    }

    @Test
    void declared_complete_a_history_on_since_the_first_write_keeps_every_recorded_version_known_through_retention() {
        ORDER.forEach(recording::apply);

        assertThat(history.beginBaseline(Start.DECLARE_COMPLETE)).isEqualTo(Begun.COMPLETE);
        assertThat(history.asOf("order-1", 2).value()).contains(oracle(2));
        clock.advance(Duration.ofDays(2));
        recording.apply(Operation.assign("order-1", 4, "status", new BsonString("shipped")));
        history.retain(clock.instant().minus(Duration.ofDays(1)), () -> true);   // folds 1 to 3

        assertThat(history.asOf("order-1", 3).value()).contains(oracle(3));
        assertThat(history.versions("order-1").baseline()).isFalse();
    }

    @Test
    void declaring_the_baseline_complete_is_refused_while_one_that_began_is_not() {
        ORDER.forEach(recording.applier()::apply);
        history.beginBaseline(Start.RUN);

        assertThatThrownBy(() -> history().beginBaseline(Start.DECLARE_COMPLETE))
                .hasMessageContaining("cannot be declared complete").hasMessageContaining("let it run to the end");
        assertThat(history.baselineComplete()).isFalse();
    }
}
