package dev.orderless.testing;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A fail point armed on the MongoDB a test talks to, through MongoDB's own test command
 * ({@code configureFailPoint}): a replica set started with {@code enableTestCommands=1} ({@code MONGODB_URI}) and the
 * embedded server answer it alike, so one test makes either answer as a replica set does during an election
 * (NotWritablePrimary, PrimarySteppedDown, InterruptedDueToReplStateChange, a write concern error, with the
 * {@code RetryableWriteError} or {@code ResumableChangeStreamError} label; a connection closed).
 *
 * <pre>{@code
 * try (FailPoint election = FailPoint.alwaysOn(admin, FailPoint.Data.failing("update")
 *         .withError(10107, "RetryableWriteError").forApp("consumer-1"))) {
 *     election.awaitEntered(3, Duration.ofSeconds(10));   // three updates refused, forced, not timed
 * }   // off: the new primary answers
 * }</pre>
 *
 * <p>Arm it only for a client of the test's own, named with {@code appName} (the connection string's
 * {@code appName=}), so a server the test run shares fails no other test's commands. {@link #CLOSE_AFTER} is the
 * embedded server's own fail point (a network error after a write was applied, which MongoDB's
 * {@code closeConnection} cannot give: it never runs the command); {@link #unavailable} says so on a real server,
 * and a test skips there with that reason.
 */
public final class FailPoint implements AutoCloseable {
    /** MongoDB's fail point that fails the commands it names. */
    public static final String FAIL_COMMAND = "failCommand";
    /** The embedded server's own: runs the command, then closes the connection before its reply is sent. */
    public static final String CLOSE_AFTER = "closeConnectionAfterCommand";

    private final MongoDatabase admin;
    private final String name;
    private final long countBefore;
    private volatile Instant offAt;

    private FailPoint(MongoDatabase admin, String name, long countBefore) {
        this.admin = admin;
        this.name = name;
        this.countBefore = countBefore;
    }

    /**
     * What a fail point's {@code data} says: the commands it takes and what it does to them; immutable.
     *
     * @param document the {@code data} document sent with {@code configureFailPoint}
     */
    public record Data(BsonDocument document) {
        public Data {
            Objects.requireNonNull(document, "document");
            document = document.clone();
        }

        /** Takes the commands named (as the driver sends them: {@code update}, {@code findAndModify}, {@code getMore}). */
        public static Data failing(String... commands) {
            if (commands.length == 0) {
                throw new IllegalArgumentException("name at least one command to fail");
            }
            return new Data(new BsonDocument("failCommands",
                    new BsonArray(Arrays.stream(commands).map(c -> (BsonValue) new BsonString(c)).toList())));
        }

        /** The command is not run, and fails with {@code code} and these error labels. */
        public Data withError(int code, String... labels) {
            return with("errorCode", new BsonInt32(code)).with("errorLabels", labels(labels));
        }

        /** The command runs, and its reply carries a write concern error of {@code code}, with these labels. */
        public Data withWriteConcernError(int code, String... labels) {
            return with("writeConcernError", new BsonDocument("code", new BsonInt32(code))
                    .append("errmsg", new BsonString("injected write concern error " + code)))
                    .with("errorLabels", labels(labels));
        }

        /** The connection closes instead of the command running (with {@link #FAIL_COMMAND}). */
        public Data withCloseConnection() {
            return with("closeConnection", BsonBoolean.TRUE);
        }

        /** Only commands from clients whose {@code appName} is {@code appName}. */
        public Data forApp(String appName) {
            return with("appName", new BsonString(appName));
        }

        /** Only commands on {@code database.collection}. */
        public Data onNamespace(String namespace) {
            return with("namespace", new BsonString(namespace));
        }

        private Data with(String field, BsonValue value) {
            BsonDocument copy = document.clone();
            copy.put(field, value);
            return new Data(copy);
        }

        private static BsonArray labels(String... labels) {
            return new BsonArray(Arrays.stream(labels).map(l -> (BsonValue) new BsonString(l)).toList());
        }
    }

    /** {@link #FAIL_COMMAND}, on until {@link #off()}. */
    public static FailPoint alwaysOn(MongoClient client, Data data) {
        return arm(client, FAIL_COMMAND, new BsonString("alwaysOn"), data);
    }

    /** {@link #FAIL_COMMAND}, for the next {@code times} commands it takes. */
    public static FailPoint times(MongoClient client, int times, Data data) {
        return arm(client, FAIL_COMMAND, new BsonDocument("times", new BsonInt32(times)), data);
    }

    /** {@link #CLOSE_AFTER} (embedded server only), for the next {@code times} commands it takes. */
    public static FailPoint closeAfter(MongoClient client, int times, Data data) {
        return arm(client, CLOSE_AFTER, new BsonDocument("times", new BsonInt32(times)), data);
    }

    /**
     * Why fail point {@code name} cannot be armed on the server {@code client} talks to (a MongoDB started without
     * {@code enableTestCommands}, or a fail point it does not have), or empty if it can. Arms nothing.
     */
    public static Optional<String> unavailable(MongoClient client, String name) {
        try {
            client.getDatabase("admin").runCommand(new BsonDocument("configureFailPoint", new BsonString(name))
                    .append("mode", new BsonString("off")));
            return Optional.empty();
        } catch (MongoCommandException e) {
            return Optional.of("the server has no fail point '" + name + "' (" + e.getErrorCodeName() + ": "
                    + e.getErrorMessage() + ")" + (name.equals(CLOSE_AFTER) ? "; it is the embedded server's own"
                    : "; start mongod with --setParameter enableTestCommands=1"));
        }
    }

    /** Arms fail point {@code name} with {@code mode} ({@code "alwaysOn"}, {@code {times: n}}) and {@code data}. */
    public static FailPoint arm(MongoClient client, String name, BsonValue mode, Data data) {
        MongoDatabase admin = client.getDatabase("admin");
        BsonDocument reply = admin.runCommand(new BsonDocument("configureFailPoint", new BsonString(name))
                .append("mode", mode).append("data", data.document()), BsonDocument.class);
        long count = reply.isNumber("count") ? reply.getNumber("count").longValue() : 0;
        return new FailPoint(admin, name, count);
    }

    /**
     * Waits (bounded) until the fail point has taken {@code times} commands since it was armed: a forced point,
     * not a timed one ({@code waitForFailPoint}).
     *
     * @throws MongoCommandException if it did not within {@code timeout} (MaxTimeMSExpired)
     */
    public void awaitEntered(long times, Duration timeout) {
        admin.runCommand(new BsonDocument("waitForFailPoint", new BsonString(name))
                .append("timesEntered", new BsonInt64(countBefore + times))
                .append("maxTimeMS", new BsonInt64(timeout.toMillis())));
    }

    /** Turns it off (the election is over); returns when, for the recovery time. Idempotent. */
    public Instant off() {
        if (offAt == null) {
            admin.runCommand(new BsonDocument("configureFailPoint", new BsonString(name))
                    .append("mode", new BsonString("off")));
            offAt = Instant.now();
        }
        return offAt;
    }

    @Override
    public void close() {
        off();
    }
}
