package dev.orderless.internal;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoServerUnavailableException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.OrderlessException;
import dev.orderless.TransientException;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BSONException;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonMaximumSizeExceededException;
import org.bson.codecs.configuration.CodecConfigurationException;

/**
 * Sorts every exception a read or write can throw into what a caller does about it; the one place that
 * knows the driver's exception types and the server's codes.
 *
 * <ol>
 *   <li>Configuration (the same for every message: permissions, a shard key other than {@code _id}, an
 *       unknown write concern, a view): {@link InvalidConfigurationException}.
 *   <li>MongoDB down for everyone (no server selectable, connection refused, host unreachable, not
 *       primary, shutting down, write concern not satisfied, for one write or a bulk write):
 *       {@link TransientException} with {@code backendDown}.
 *   <li>Too large (a command the driver will not send, a document the server will not grow):
 *       {@link CannotApplyException} {@code TOO_LARGE}; a value the driver cannot encode: bad input.
 *   <li>A write error that depends on this document only (a field of another type, a path that cannot
 *       be created, a validator refusing it), from an allow-list of codes: {@code NO_PROGRESS}, with the
 *       server's message. Never a duplicate {@code _id}, which the applier handles as a lost insert race.
 *   <li>Anything else (a connection dropped mid-operation, a timeout, a write conflict, an error labelled
 *       retryable, a code nobody listed): {@link TransientException} that cannot tell who else is
 *       affected; the consumer bounds it.
 * </ol>
 */
public final class MongoErrors {
    /**
     * Codes a server or a network gives while it cannot serve anyone: host unreachable or not found,
     * network timeout, not primary, recovering, shutting down, read preference unsatisfiable, disk full,
     * user writes blocked (371; a write that changes nothing passes, so the hold clock's probe cannot
     * see it), temporarily unavailable under cache pressure (365), an Atlas refusal such as a quota (8000).
     */
    private static final Set<Integer> DOWN = Set.of(6, 7, 89, 91, 133, 189, 202, 262, 365, 371, 8000, 9001, 10058,
            10107, 11600, 11602, 13435, 13436, 14031);
    /** Codes of a set-up that refuses every write: fix the configuration, retrying cannot help. */
    private static final Set<Integer> CONFIGURATION = Set.of(13, 18, 61, 79, 100, 166);
    /** BSONObjectTooLarge, BSONObjectTooLarge (update), and DocumentTooLarge-style codes. */
    private static final Set<Integer> TOO_LARGE = Set.of(10334, 17419, 17420, 13548);
    /**
     * Write errors caused by the stored document itself, the same on every attempt: BadValue,
     * FailedToParse, TypeMismatch, PathNotViable, ConflictingUpdateOperators, DollarPrefixedFieldName,
     * InvalidIdField, NotSingleValueField, InvalidDBRef, EmptyFieldName, DottedFieldName, ImmutableField,
     * DocumentValidationFailure, and the legacy "cannot traverse" codes.
     */
    private static final Set<Integer> DOCUMENT = Set.of(2, 9, 14, 28, 40, 52, 53, 54, 55, 56, 57, 66, 121,
            16836, 16837);
    private static final Set<String> RETRYABLE_LABELS = Set.of("RetryableWriteError", "TransientTransactionError");
    /** The name MongoDB gives the index on {@code _id}. */
    public static final String ID_INDEX = "_id_";
    private static final Pattern DUPLICATE_INDEX = Pattern.compile("index: (\\S+) dup key");
    /** An exception in the driver's cluster view, {@code {java.net.ConnectException: Connection refused}}: its message. */
    private static final Pattern CLUSTER_CAUSE = Pattern.compile("\\{[\\w.$]+(?:Exception|Error): ([^{}]*)\\}");
    private static final Pattern CLUSTER_ADDRESS = Pattern.compile("address=([^,}\\s]+)");

    private MongoErrors() {
    }

    /**
     * A duplicate key, whichever way the driver reports it: a {@link MongoWriteException} from an update,
     * or a {@code MongoCommandException} from a command such as {@code findAndModify}.
     */
    public static boolean isDuplicateKey(MongoException e) {
        return ErrorCategory.fromErrorCode(codeOf(e)) == ErrorCategory.DUPLICATE_KEY;
    }

    /** The index a duplicate key error names ({@code _id_} for the entity key), if the message names one. */
    public static Optional<String> duplicateKeyIndex(MongoException e) {
        String message = e instanceof MongoWriteException w ? w.getError().getMessage() : e.getMessage();
        Matcher m = DUPLICATE_INDEX.matcher(message == null ? "" : message);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * True if a bulk write's error is a duplicate key on {@code _id}: for an upsert, "did not match" (the
     * document exists and the guard refused it, or a concurrent first write won the insert). A message
     * that names no index counts as {@code _id}, as for one write.
     */
    public static boolean isDuplicateIdKey(com.mongodb.bulk.BulkWriteError error) {
        if (ErrorCategory.fromErrorCode(error.getCode()) != ErrorCategory.DUPLICATE_KEY) {
            return false;
        }
        Matcher m = DUPLICATE_INDEX.matcher(error.getMessage() == null ? "" : error.getMessage());
        return !m.find() || m.group(1).equals(ID_INDEX);
    }

    /**
     * True if {@code error} is an upsert's insert refused because its update sets an array entry by position
     * ({@code a.$}) and its filter matched no document to take the position from: what an in-place refresh sent as
     * an upsert answers when it matched nothing, whether the document is there or not (nothing is inserted).
     */
    public static boolean isPositionalMiss(com.mongodb.bulk.BulkWriteError error) {
        return error.getCode() == 2 && error.getMessage() != null
                && error.getMessage().contains("positional operator did not find the match");
    }

    /** What a caller does about {@code e}, thrown while doing {@code what} (which names the entity and seq). */
    public static OrderlessException translate(String what, RuntimeException e) {
        if (e instanceof OrderlessException o) {
            return o;
        }
        if (e instanceof BsonMaximumSizeExceededException) {
            return new CannotApplyException(CannotApplyException.Kind.TOO_LARGE,
                    what + ": too large for MongoDB: " + e.getMessage(), e);
        }
        if (e instanceof BSONException || e instanceof BsonInvalidOperationException
                || e instanceof CodecConfigurationException) {
            return new InvalidInputException(what + ": cannot be encoded as BSON: " + e.getMessage(), e);
        }
        if (!(e instanceof MongoException m)) {
            return new TransientException(what + ": unexpected " + e, e, false);
        }
        if (m instanceof MongoOperationTimeoutException) {
            // timeoutMS ran out: a slow operation or an unreachable server, who else is affected is unknown
            return new TransientException(what + ": timed out: " + m.getMessage(), m, false);
        }
        int code = codeOf(m);
        if (m instanceof MongoSecurityException || CONFIGURATION.contains(code)) {
            return new InvalidConfigurationException(what + ": MongoDB refuses it for a reason of configuration"
                    + " (code " + code + "): " + m.getMessage() + "; check the user's roles, the collection's shard key"
                    + " (it must be _id) and the write concern", m);
        }
        if (isBackendDown(m, code)) {
            return new TransientException(what + ": MongoDB" + address(m).map(a -> " at " + a).orElse("")
                    + " unavailable: " + brief(m), m, true);
        }
        if (TOO_LARGE.contains(code)) {
            return new CannotApplyException(CannotApplyException.Kind.TOO_LARGE,
                    what + ": too large: the document would pass MongoDB's 16 MB limit (code " + code + ")", m);
        }
        if (m instanceof MongoWriteException w && DOCUMENT.contains(code)
                && RETRYABLE_LABELS.stream().noneMatch(m::hasErrorLabel)) {
            return new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "no progress: " + what
                    + ": MongoDB refuses the write on this document (code " + code + "): " + w.getError().getMessage(), m);
        }
        return new TransientException(what + ": MongoDB failed the operation: " + m.getMessage(), m, false);
    }

    /**
     * The server {@code e} names: a socket failure's address, or the first address in the cluster view a
     * server-selection timeout describes ({@code servers=[{address=host:port, ...}]}).
     */
    public static Optional<String> address(MongoException e) {
        if (e instanceof com.mongodb.MongoSocketException socket && socket.getServerAddress() != null) {
            return Optional.of(socket.getServerAddress().toString());
        }
        Matcher m = CLUSTER_ADDRESS.matcher(e.getMessage() == null ? "" : e.getMessage());
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /**
     * {@code e}'s message, kept to one short line: a server-selection timeout describes the driver's whole view of
     * the cluster, several hundred characters; what a reader needs of it is that no server answered, and why.
     */
    static String brief(MongoException e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        if (!(e instanceof MongoTimeoutException) || !message.startsWith("Timed out")) {
            return message;
        }
        Matcher cause = CLUSTER_CAUSE.matcher(message);
        String why = null;
        while (cause.find()) {
            why = cause.group(1).strip();   // the last, the deepest: "Connection refused"
        }
        return "no server answered within the server selection timeout" + (why == null || why.isEmpty() ? "" : " ("
                + why + ")") + ": check that it is running and that the URI names it (serverSelectionTimeoutMS in the"
                + " URI sets how long each step waits)";
    }

    /** True if {@code e} shows MongoDB unavailable to every operation, not just to this one. */
    public static boolean isBackendDown(MongoException e) {
        return isBackendDown(e, codeOf(e));
    }

    private static boolean isBackendDown(MongoException e, int code) {
        if (e instanceof MongoOperationTimeoutException) {
            return false;   // a subclass of MongoTimeoutException, but it may be this one slow operation
        }
        return e instanceof MongoTimeoutException          // no server selectable in time
                || e instanceof MongoSocketOpenException   // connection refused
                || e instanceof MongoServerUnavailableException
                || e instanceof MongoNotPrimaryException
                || e instanceof MongoNodeIsRecoveringException
                || e instanceof MongoWriteConcernException
                // a bulk write applied and then not acknowledged (an election, a shutdown): as for one write
                || e instanceof MongoBulkWriteException bulk && bulk.getWriteConcernError() != null
                || DOWN.contains(code);
    }

    private static int codeOf(MongoException e) {
        if (e instanceof MongoWriteException w) {
            return w.getError().getCode();
        }
        if (e instanceof MongoCommandException c) {
            return c.getErrorCode();
        }
        return e.getCode();
    }
}
