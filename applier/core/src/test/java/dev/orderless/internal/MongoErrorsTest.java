package dev.orderless.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoConnectionPoolClearedException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteError;
import com.mongodb.connection.ServerId;
import com.mongodb.connection.ClusterId;
import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.OrderlessException;
import dev.orderless.TransientException;
import java.io.IOException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonMaximumSizeExceededException;
import org.bson.BsonSerializationException;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * Each family of driver exception lands in exactly one handling. The exceptions are built the way the
 * driver builds them; which server situations raise them is pinned by the conformance and outage tests.
 */
class MongoErrorsTest {
    private static final ServerAddress SERVER = new ServerAddress("127.0.0.1", 27017);

    @Test
    void no_server_selectable_and_a_refused_connection_mean_mongodb_is_down_for_everyone() {
        assertDown(new MongoTimeoutException("Timed out while waiting for a server"));
        assertDown(new MongoSocketOpenException("Exception opening socket", SERVER, new IOException("refused")));
        assertDown(command(10107, "NotWritablePrimary"));
        assertDown(command(91, "ShutdownInProgress"));
    }

    @Test
    void a_server_selection_timeout_is_said_in_one_short_line_with_its_address_and_its_cause() {
        MongoTimeoutException timeout = new MongoTimeoutException("Timed out while waiting for a server that matches"
                + " WritableServerSelector. Client view of cluster state is {type=UNKNOWN, servers=[{address=127.0.0.1:27999,"
                + " type=UNKNOWN, state=CONNECTING, exception={com.mongodb.MongoSocketOpenException: Exception opening"
                + " socket}, caused by {java.net.ConnectException: Connection refused}}]");

        OrderlessException translated = MongoErrors.translate("apply to orders 'o-1' seq 3", timeout);

        assertThat(translated.getMessage()).isEqualTo("apply to orders 'o-1' seq 3: MongoDB at 127.0.0.1:27999"
                + " unavailable: no server answered within the server selection timeout (Connection refused): check that"
                + " it is running and that the URI names it (serverSelectionTimeoutMS in the URI sets how long each step"
                + " waits)");
    }

    @Test
    void a_connection_dropped_mid_operation_or_a_cleared_pool_is_transient_but_not_proof_of_an_outage() {
        assertTransientOnly(new MongoSocketReadException("Prematurely reached end of stream", SERVER));
        assertTransientOnly(new MongoConnectionPoolClearedException(new ServerId(new ClusterId(), SERVER), null));
        assertTransientOnly(command(50, "MaxTimeMSExpired"));
    }

    @Test
    void a_network_or_replica_set_code_on_a_write_means_down_never_no_progress() {
        for (int code : new int[] {6, 7, 89, 133, 189, 262, 365, 371, 8000, 9001, 10107, 11602}) {
            assertDown(write(code, "code " + code));
        }
    }

    @Test
    void a_write_error_not_known_to_depend_on_the_document_is_transient_never_no_progress() {
        for (int code : new int[] {24, 50, 112, 11601, 123456}) {
            assertTransientOnly(write(code, "code " + code));
        }
    }

    @Test
    void a_write_error_labelled_retryable_is_transient_whatever_its_code() {
        assertTransientOnly(write(2, "BadValue", java.util.Set.of("RetryableWriteError")));
    }

    @Test
    void an_operation_timeout_is_transient_but_not_proof_of_an_outage_although_it_is_a_timeout_exception() {
        assertTransientOnly(new MongoOperationTimeoutException("Operation exceeded the timeout limit"));
        assertThat(MongoErrors.isBackendDown(new MongoOperationTimeoutException("timeoutMS"))).isFalse();
    }

    @Test
    void an_exception_nobody_expected_is_transient_so_the_consumer_bounds_it() {
        assertTransientOnly(new IllegalStateException("state should be: open"));
    }

    @Test
    void a_command_or_document_past_16_mb_is_too_large() {
        assertKind(new BsonMaximumSizeExceededException("Payload document size is larger than maximum"),
                CannotApplyException.Kind.TOO_LARGE);
        assertKind(write(17419, "Resulting document after update is larger than 16777216"),
                CannotApplyException.Kind.TOO_LARGE);
    }

    @Test
    void a_value_the_driver_cannot_encode_is_bad_input() {
        assertThat(MongoErrors.translate("apply", new BsonSerializationException("bad key"))).isInstanceOf(InvalidInputException.class);
    }

    @Test
    void a_write_error_on_this_document_is_no_progress_quoting_the_server() {
        OrderlessException e = assertKind(write(2, "The field 'classes' must be an array but is of type string"),
                CannotApplyException.Kind.NO_PROGRESS);
        assertThat(((CannotApplyException) e).reason()).startsWith("no progress: apply")
                .contains("must be an array");
    }

    @Test
    void permissions_and_a_foreign_shard_key_are_configuration_not_the_message() {
        assertThat(MongoErrors.translate("apply", command(13, "Unauthorized"))).isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("check the user's roles");
        assertThat(MongoErrors.translate("apply", write(61, "ShardKeyNotFound"))).isInstanceOf(InvalidConfigurationException.class);
    }

    @Test
    void the_index_a_duplicate_key_names_is_read_from_the_message() {
        assertThat(MongoErrors.duplicateKeyIndex(write(11000,
                "E11000 duplicate key error collection: db.students index: email_1 dup key: { email: \"a\" }")))
                .contains("email_1");
        assertThat(MongoErrors.duplicateKeyIndex(write(11000, "E11000 duplicate key error"))).isEmpty();
    }

    private static void assertDown(RuntimeException e) {
        assertThat(MongoErrors.translate("apply", e)).isInstanceOfSatisfying(TransientException.class,
                t -> assertThat(t.backendDown()).as(e.toString()).isTrue());
    }

    private static void assertTransientOnly(RuntimeException e) {
        assertThat(MongoErrors.translate("apply", e)).isInstanceOfSatisfying(TransientException.class,
                t -> assertThat(t.backendDown()).as(e.toString()).isFalse());
    }

    private static OrderlessException assertKind(RuntimeException e, CannotApplyException.Kind kind) {
        OrderlessException translated = MongoErrors.translate("apply", e);
        assertThat(translated).isInstanceOfSatisfying(CannotApplyException.class, c -> assertThat(c.kind()).isEqualTo(kind));
        return translated;
    }

    private static MongoCommandException command(int code, String name) {
        return new MongoCommandException(new BsonDocument("ok", new BsonInt32(0)).append("code", new BsonInt32(code))
                .append("codeName", new BsonString(name)).append("errmsg", new BsonString(name)), SERVER);
    }

    private static MongoWriteException write(int code, String message) {
        return write(code, message, java.util.Set.of());
    }

    private static MongoWriteException write(int code, String message, java.util.Set<String> labels) {
        return new MongoWriteException(new WriteError(code, message, new BsonDocument()), SERVER, labels);
    }
}
