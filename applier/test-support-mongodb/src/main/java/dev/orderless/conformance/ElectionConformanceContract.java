package dev.orderless.conformance;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.FailPoint;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a replica set answers during an election, as the driver hands it to orderless: the error shapes (code,
 * codeName, error labels) MongoDB documents for NotWritablePrimary (10107), PrimarySteppedDown (189),
 * InterruptedDueToReplStateChange (11602) and a write concern error (ShutdownInProgress, 91) on a write that was
 * applied, with the {@code RetryableWriteError} label; a change stream whose getMore fails with
 * {@code ResumableChangeStreamError}; a connection closed before a command runs, and (embedded only) after it ran.
 * Each is injected with MongoDB's own {@code failCommand} fail point ({@link FailPoint}), so a real replica set
 * started with {@code enableTestCommands=1} ({@code MONGODB_URI}) checks the same; where the server has no fail
 * point, each test is skipped with the server's reason.
 *
 * <p>Every fail point names the test's own client ({@code appName}), so a server the run shares fails no other
 * test's commands.
 */
@ExtendWith(MongoExtension.class)
public abstract class ElectionConformanceContract {
    private static final AtomicReference<String> BACKEND = new AtomicReference<>("?");
    private static final List<String> SKIPPED = new ArrayList<>();
    private static final Duration WAIT = Duration.ofSeconds(10);

    private MongoClient client;
    private MongoClient admin;
    private String app;
    private MongoCollection<BsonDocument> docs;

    @BeforeEach
    void setUp(MongoBackend backend, MongoClient admin, MongoDatabase db) {
        BACKEND.set(backend.description());
        this.admin = admin;
        this.app = "election-" + UUID.randomUUID().toString().substring(0, 8);
        this.client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString())).applicationName(app).build());
        this.docs = client.getDatabase(db.getName()).getCollection("elections", BsonDocument.class);
    }

    @AfterEach
    void tearDown() {
        client.close();
    }

    @AfterAll
    static void report() {
        System.out.println("[conformance] elections on " + BACKEND.get() + ": "
                + (SKIPPED.isEmpty() ? "every error shape checked" : "skipped " + SKIPPED));
    }

    @Test
    void a_write_refused_as_not_writable_primary_carries_code_10107_its_name_and_the_retryable_write_label() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        try (FailPoint election = FailPoint.times(admin, 1, FailPoint.Data.failing("update")
                .withError(10107, "RetryableWriteError").forApp(app))) {
            assertThatThrownBy(() -> docs.updateOne(eq("_id", "a"), set("v", 1)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(10107);
                        assertThat(e.getErrorCodeName()).isEqualTo("NotWritablePrimary");
                        assertThat(e.hasErrorLabel("RetryableWriteError")).isTrue();
                    });
            election.awaitEntered(1, WAIT);
        }
        assertThat(docs.countDocuments()).as("nothing written").isZero();
    }

    @Test
    void a_find_and_modify_refused_as_primary_stepped_down_carries_code_189_and_its_name() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        docs.insertOne(new BsonDocument("_id", new BsonString("lease")).append("v", new BsonInt32(1)));
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("findAndModify")
                .withError(189, "RetryableWriteError").forApp(app))) {
            assertThatThrownBy(() -> docs.findOneAndUpdate(eq("_id", "lease"), set("v", 2)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(189);
                        assertThat(e.getErrorCodeName()).isEqualTo("PrimarySteppedDown");
                        assertThat(e.hasErrorLabel("RetryableWriteError")).isTrue();
                    });
        }
        assertThat(docs.find(eq("_id", "lease")).first().getInt32("v").getValue()).as("not modified").isEqualTo(1);
    }

    @Test
    void an_insert_interrupted_by_a_replication_state_change_carries_code_11602_and_its_name() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("insert")
                .withError(11602, "RetryableWriteError").forApp(app))) {
            assertThatThrownBy(() -> docs.insertOne(new BsonDocument("_id", new BsonString("r"))))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(11602);
                        assertThat(e.getErrorCodeName()).isEqualTo("InterruptedDueToReplStateChange");
                        assertThat(e.hasErrorLabel("RetryableWriteError")).isTrue();
                    });
        }
        assertThat(docs.countDocuments()).isZero();
    }

    @Test
    void a_write_concern_error_comes_after_the_write_was_applied_with_its_code_and_label() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("update")
                .withWriteConcernError(91, "RetryableWriteError").forApp(app))) {
            assertThatThrownBy(() -> docs.updateOne(eq("_id", "w"), set("v", 1),
                    new com.mongodb.client.model.UpdateOptions().upsert(true)))
                    .isInstanceOfSatisfying(MongoException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(91);
                        assertThat(e).isInstanceOfAny(MongoWriteConcernException.class, MongoCommandException.class);
                        assertThat(e.hasErrorLabel("RetryableWriteError")).isTrue();
                    });
        }
        assertThat(docs.countDocuments(eq("_id", "w"))).as("the write was applied").isEqualTo(1);
    }

    @Test
    void a_bulk_write_answered_with_a_write_concern_error_was_applied_whole() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("update")
                .withWriteConcernError(91, "RetryableWriteError").forApp(app))) {
            assertThatThrownBy(() -> docs.bulkWrite(List.of(
                    new UpdateOneModel<>(eq("_id", "b1"), set("v", 1), new com.mongodb.client.model.UpdateOptions().upsert(true)),
                    new UpdateOneModel<>(eq("_id", "b2"), set("v", 1), new com.mongodb.client.model.UpdateOptions().upsert(true)))))
                    .isInstanceOfSatisfying(MongoException.class, e -> {
                        assertThat(e.hasErrorLabel("RetryableWriteError")).isTrue();
                        int code = e instanceof MongoBulkWriteException bulk ? bulk.getWriteConcernError().getCode()
                                : e.getCode();
                        assertThat(code).isEqualTo(91);
                    });
        }
        assertThat(docs.countDocuments()).as("both applied").isEqualTo(2);
    }

    @Test
    void a_change_stream_whose_get_more_fails_with_the_resumable_label_resumes_with_no_gap_and_no_double() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        docs.insertOne(new BsonDocument("_id", new BsonString("before")));   // the collection exists before the watch
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream = docs.watch().cursor()) {
            docs.insertOne(new BsonDocument("_id", new BsonString("e1")));
            assertThat(next(stream).getDocumentKey().getString("_id").getValue()).isEqualTo("e1");
            docs.insertOne(new BsonDocument("_id", new BsonString("e2")));
            try (FailPoint election = FailPoint.times(admin, 1, FailPoint.Data.failing("getMore")
                    .withError(10107, "ResumableChangeStreamError").forApp(app))) {
                List<String> seen = new ArrayList<>();
                docs.insertOne(new BsonDocument("_id", new BsonString("e3")));
                Awaitility.await().atMost(WAIT).until(() -> {
                    ChangeStreamDocument<BsonDocument> event = stream.tryNext();
                    if (event != null) {
                        seen.add(event.getDocumentKey().getString("_id").getValue());
                    }
                    return seen.size() >= 2;
                });
                election.awaitEntered(1, WAIT);
                assertThat(seen).as("the driver resumed after e1: e2 and e3 once each").containsExactly("e2", "e3");
            }
        }
    }

    @Test
    void a_connection_closed_instead_of_a_command_leaves_the_command_unapplied() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        try (FailPoint ignored = FailPoint.times(admin, 1, FailPoint.Data.failing("insert").withCloseConnection()
                .forApp(app))) {
            assertThatThrownBy(() -> docs.insertOne(new BsonDocument("_id", new BsonString("c"))))
                    .isInstanceOf(MongoSocketException.class);
        }
        assertThat(docs.countDocuments()).isZero();
    }

    @Test
    void a_connection_closed_after_a_write_ran_leaves_it_applied_and_unanswered() {
        requireFailPoint(FailPoint.CLOSE_AFTER);
        try (FailPoint ignored = FailPoint.closeAfter(admin, 1, FailPoint.Data.failing("update").forApp(app))) {
            assertThatThrownBy(() -> docs.updateOne(eq("_id", "n"), set("v", 1),
                    new com.mongodb.client.model.UpdateOptions().upsert(true)))
                    .isInstanceOf(MongoSocketException.class);
        }
        assertThat(docs.countDocuments(eq("_id", "n"))).as("applied before the connection closed").isEqualTo(1);
    }

    @Test
    void a_fail_point_for_one_application_fails_no_other_clients_commands() {
        requireFailPoint(FailPoint.FAIL_COMMAND);
        try (FailPoint election = FailPoint.alwaysOn(admin, FailPoint.Data.failing("insert")
                .withError(10107, "RetryableWriteError").forApp(app))) {
            admin.getDatabase(docs.getNamespace().getDatabaseName()).getCollection("elections", BsonDocument.class)
                    .insertOne(new BsonDocument("_id", new BsonString("other")));
            assertThatThrownBy(() -> docs.insertOne(new BsonDocument("_id", new BsonString("mine"))))
                    .isInstanceOf(MongoCommandException.class);
            election.awaitEntered(1, WAIT);
        }
        assertThat(docs.countDocuments()).isEqualTo(1);
    }

    private void requireFailPoint(String name) {
        Optional<String> unavailable = FailPoint.unavailable(admin, name);
        unavailable.ifPresent(why -> {
            synchronized (SKIPPED) {
                SKIPPED.add(name + ": " + why);
            }
        });
        assumeTrue(unavailable.isEmpty(), () -> unavailable.orElse(""));
    }

    private static ChangeStreamDocument<BsonDocument> next(MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> stream) {
        AtomicReference<ChangeStreamDocument<BsonDocument>> event = new AtomicReference<>();
        Awaitility.await().atMost(WAIT).pollDelay(0, TimeUnit.MILLISECONDS)
                .until(() -> {
                    event.set(stream.tryNext());
                    return event.get() != null;
                });
        return event.get();
    }
}
