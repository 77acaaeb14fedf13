package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.TransientException;
import dev.orderless.backends.MongoBackend;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.FailPoint;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What an apply and a batch make of a replica set's answers during an election, injected with MongoDB's own
 * {@code failCommand} fail point ({@link FailPoint}): the server reports itself as a standalone, so the driver does
 * not retry the write, and each error reaches the applier. Every one is transient (the op applies later, never a
 * dead letter), and shows MongoDB down for everyone where the error says so; a write that was applied before the
 * error is absorbed as a duplicate when it comes again.
 */
@ExtendWith(MongoExtension.class)
class ElectionErrorsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private MongoClient admin;
    private MongoClient client;
    private String app;
    private MongoCollection<BsonDocument> students;
    private GuardedApplier applier;

    @BeforeEach
    void setUp(MongoBackend backend, MongoClient admin, MongoDatabase db) {
        this.admin = admin;
        app = "apply-" + UUID.randomUUID().toString().substring(0, 8);
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString())).applicationName(app).build());
        students = Students.collection(client.getDatabase(db.getName()));
        applier = GuardedApplier.create(students, Students.SCHEMA);
    }

    @AfterEach
    void tearDown() {
        client.close();
    }

    @ParameterizedTest(name = "code {0}")
    @CsvSource({"10107", "189", "11602"})
    void an_apply_refused_during_an_election_is_transient_says_mongodb_is_down_and_applies_once_it_is_over(int code) {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        Operation op = Students.enroll("s-1", 5, "CS 101");
        try (FailPoint election = FailPoint.times(admin, 1, FailPoint.Data.failing("update")
                .withError(code, "RetryableWriteError").forApp(app))) {
            assertThatThrownBy(() -> applier.apply(op))
                    .isInstanceOfSatisfying(TransientException.class, e -> assertThat(e.backendDown())
                            .as("an election fails every write: the consumer waits for MongoDB").isTrue());
            election.awaitEntered(1, WAIT);
        }

        assertThat(applier.apply(op)).isEqualTo(Outcome.APPLIED);
        assertThat(state()).isEqualTo(expected(op));
    }

    @Test
    void an_apply_answered_with_a_write_concern_error_is_transient_and_its_retry_is_absorbed_as_a_duplicate() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        Operation op = Students.enroll("s-1", 5, "CS 101");
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("update")
                .withWriteConcernError(91, "RetryableWriteError").forApp(app))) {
            assertThatThrownBy(() -> applier.apply(op))
                    .isInstanceOfSatisfying(TransientException.class, e -> assertThat(e.backendDown()).isTrue());
        }

        assertThat(applier.apply(op)).as("it was applied before the error: the retry is a duplicate")
                .isEqualTo(Outcome.DUPLICATE);
        assertThat(state()).isEqualTo(expected(op));
    }

    @Test
    void a_batch_answered_with_a_write_concern_error_fails_whole_as_mongodb_down_and_its_retry_is_absorbed() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        List<Operation> batch = batch();
        List<BatchResult> first;
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("update")
                .withWriteConcernError(91, "RetryableWriteError").forApp(app))) {
            first = applier.applyAll(batch);
        }

        assertThat(first).allSatisfy(r -> assertThat(r).isInstanceOfSatisfying(BatchResult.Failed.class,
                failed -> assertThat(failed.error()).isInstanceOfSatisfying(TransientException.class,
                        e -> assertThat(e.backendDown()).as("a write concern error shows MongoDB down for everyone,"
                                + " as it does for one apply").isTrue())));
        assertThat(applier.applyAll(batch)).allSatisfy(r -> assertThat(r).isInstanceOfSatisfying(BatchResult.Done.class,
                done -> assertThat(done.outcome()).isEqualTo(Outcome.DUPLICATE)));
        assertThat(state()).isEqualTo(expected(batch.toArray(Operation[]::new)));
    }

    @Test
    void a_batch_applied_whose_connection_closed_before_the_reply_is_absorbed_as_duplicates_when_retried() {
        requireFailPoint(FailPoint.CLOSE_AFTER);
        List<Operation> batch = batch();
        List<BatchResult> first;
        try (FailPoint lost = FailPoint.closeAfter(admin, 1, FailPoint.Data.failing("update").forApp(app))) {
            first = applier.applyAll(batch);
            lost.awaitEntered(1, WAIT);
        }
        List<Operation> again = new ArrayList<>();
        for (BatchResult r : first) {
            assertThat(r).isNotInstanceOf(BatchResult.Refused.class);
            if (r instanceof BatchResult.Failed failed) {
                assertThat(failed.error()).isInstanceOf(TransientException.class);
                again.add(failed.op());
            } else {
                assertThat(((BatchResult.Done) r).outcome()).as("applied by the bulk write whose reply was lost")
                        .isEqualTo(Outcome.DUPLICATE);
            }
        }

        assertThat(applier.applyAll(again)).allSatisfy(r -> assertThat(r).isInstanceOfSatisfying(BatchResult.Done.class,
                done -> assertThat(done.outcome()).isEqualTo(Outcome.DUPLICATE)));
        assertThat(state()).isEqualTo(expected(batch.toArray(Operation[]::new)));
    }

    private static List<Operation> batch() {
        return List.of(Students.enroll("s-1", 5, "CS 101"), Students.rename("s-1", 6, "Ada"),
                Students.enroll("s-2", 3, "MA 201"), Students.credit("s-2", 4, 5), Students.unenroll("s-3", 9, "PH 1"));
    }

    private Map<String, EntityState> state() {
        return EntityState.readAll(students.find(), Students.SCHEMA);
    }

    private static Map<String, EntityState> expected(Operation... ops) {
        return new ReferenceModel(Students.SCHEMA).replay(List.of(ops));
    }

    private void requireFailPoint(String name) {
        var unavailable = FailPoint.unavailable(admin, name);
        assumeTrue(unavailable.isEmpty(), () -> unavailable.orElse(""));
    }
}
