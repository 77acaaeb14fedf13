package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.Pause;
import dev.orderless.backends.PausePoint;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The history's duplicate check decides from a read: an insert that meets a recorded {@code (entity, seq)}
 * reads that record to tell a redelivery (DUPLICATE) from another operation with the same seq (COLLISION).
 * Records never change, but retention drops them once folded; these tests hold that read
 * ({@link EmbeddedMongo#pause}) while a retention pass folds and drops the record it looks for.
 */
class HistoryInterleavingsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ReferenceModel ORACLE = new ReferenceModel(HistoryTest.SCHEMA);
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private static EmbeddedMongo mongo;
    private static MongoClient client;
    private static ExecutorService threads;
    private final ManualClock clock = new ManualClock();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private History history;
    private RecordingApplier recording;

    @BeforeAll
    static void start() {
        mongo = EmbeddedMongo.start();   // a server of its own: a held command holds no other test's connection
        client = MongoClients.create(mongo.connectionString());
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        client.close();
        mongo.close();
    }

    @BeforeEach
    void setUp() {
        MongoDatabase db = client.getDatabase("history_interleavings_" + DATABASES.incrementAndGet());
        MongoCollection<BsonDocument> records = db.getCollection("students_history", BsonDocument.class);
        MongoCollection<BsonDocument> students = db.getCollection("students", BsonDocument.class);
        history = HistoryTest.fromTheStart(records, students, HistoryTest.SCHEMA,
                HistoryOptions.ofDefaults().withClock(clock).withMeters(meters));
        recording = history.recording(GuardedApplier.create(students, HistoryTest.SCHEMA));
    }

    private static Operation rename(long seq) {
        return Operation.assign("s1", seq, "name", new BsonString("v" + seq));
    }

    @Test
    void a_redelivery_whose_twin_is_folded_and_dropped_between_its_insert_and_its_read_is_a_duplicate() throws Exception {
        List<Operation> ops = List.of(rename(1), rename(2));
        ops.forEach(recording::apply);
        clock.advance(Duration.ofDays(2));

        Future<Outcome> redelivered;
        try (Pause twin = mongo.pause(PausePoint.before("find", "students_history").where(readsTwinOf(1)))) {
            redelivered = threads.submit(() -> recording.apply(rename(1)));
            twin.awaitHeld(WAIT);                                        // its insert met the record of seq 1
            assertThat(history.retain(clock.instant(), () -> true).folded()).isEqualTo(2);   // folded, dropped
        }
        assertThat(redelivered.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Outcome.SUPERSEDED);
        assertThat(recorded("duplicate")).isEqualTo(1);
        assertThat(history.versions("s1").late()).as("nothing recorded below the horizon").isEmpty();
        assertThat(history.asOf("s1", 2).value()).contains(ORACLE.replay(ops).get("s1"));
    }

    @Test
    void a_redelivered_batch_whose_twins_are_folded_and_dropped_before_its_read_is_all_duplicates() throws Exception {
        List<Operation> ops = List.of(rename(1), rename(2), rename(3));
        ops.forEach(recording::apply);
        clock.advance(Duration.ofDays(2));

        Future<List<BatchResult>> redelivered;
        try (Pause twins = mongo.pause(PausePoint.before("find", "students_history").where(readsTwinOf(1)))) {
            redelivered = threads.submit(() -> recording.applyAll(ops));
            twins.awaitHeld(WAIT);                                       // its insert met all three records
            assertThat(history.retain(clock.instant(), () -> true).folded()).isEqualTo(3);
        }
        assertThat(redelivered.get(WAIT.toSeconds(), TimeUnit.SECONDS)).allSatisfy(result ->
                assertThat(((BatchResult.Done) result).outcome()).isIn(Outcome.DUPLICATE, Outcome.SUPERSEDED));
        assertThat(recorded("duplicate")).isEqualTo(3);
        assertThat(history.versions("s1").late()).isEmpty();
        assertThat(history.asOf("s1", 3).value()).contains(ORACLE.replay(ops).get("s1"));
    }

    /** A find whose filter names the record of {@code (s1, seq)}: the duplicate check's read of its twin. */
    private static java.util.function.Predicate<BsonDocument> readsTwinOf(long seq) {
        return command -> command.getDocument("filter").toJson().replace(" ", "").contains("\"seq\":" + seq);
    }

    private double recorded(String outcome) {
        return meters.counter("orderless.history.recorded", "collection", "students_history", "outcome", outcome).count();
    }
}
