package dev.orderless.backends;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Predicate;
import org.bson.BsonDocument;

/**
 * Where {@link EmbeddedMongo#pause} holds a command: {@link When#BEFORE} the server runs it,
 * {@link When#AFTER} it ran and before its reply is sent, or {@link When#WHILE_REPLYING}, in the middle of
 * sending a read's result. Which command: its name as the driver sends it
 * ({@code find}, {@code update}, {@code findAndModify}, {@code insert}, {@code delete}, {@code aggregate},
 * {@code getMore}), the collection it names, and optionally a condition on the whole command document
 * (for an {@code update}, its {@code updates} array holds each statement's {@code q} and {@code u}).
 *
 * <p>Made with {@link #before}, {@link #after} or {@link #whileReplying}, narrowed with {@link #where};
 * immutable.
 *
 * @param when       before the server runs the command, or after it ran and before its reply is sent
 * @param command    the command's name, as the driver sends it (case-insensitive)
 * @param collection the collection the command names
 * @param condition  what the command document must satisfy to be held
 * @param afterField for {@link When#WHILE_REPLYING}, the field of the result after which its reply is held;
 *                   empty for the other points
 * @param holdAtMost how long a held command waits for {@link Pause#release()} before it goes on by itself
 *                   (and the pause reports that it timed out), so a failed test never leaves a server thread
 *                   stuck
 */
public record PausePoint(When when, String command, String collection, Predicate<BsonDocument> condition,
                         String afterField, Duration holdAtMost) {

    /** The two points of a command where it can be held. */
    public enum When {
        /** The server received the command and has not run it: nothing it writes is visible yet. */
        BEFORE,
        /**
         * The server ran the command and released the collection's lock, and its reply is not sent: a read's
         * result is taken (a snapshot, as a real MongoDB's), a write's effect is visible to others. A command that
         * failed (a duplicate key, say) is held here too, before its error is sent.
         */
        AFTER,
        /**
         * The server ran a read ({@code find}, {@code getMore}, {@code aggregate}, {@code findAndModify}) and is
         * sending its first result: held once the field {@link PausePoint#afterField()} of that document was read for the
         * reply. A server that sends snapshots sends the same document whatever lands meanwhile; one that
         * encoded the stored document itself (mongo-java-server 1.47 did) would send the fields after it as a
         * later write left them: a document that never existed.
         */
        WHILE_REPLYING
    }

    /** How long a held command waits by default before it goes on by itself. */
    public static final Duration DEFAULT_HOLD = Duration.ofSeconds(30);

    public PausePoint {
        Objects.requireNonNull(when, "when");
        Objects.requireNonNull(condition, "condition");
        if (command == null || command.isBlank()) {
            throw new IllegalArgumentException("command must name a command, such as 'find' or 'update', was '"
                    + command + "'");
        }
        if (collection == null || collection.isBlank()) {
            throw new IllegalArgumentException("collection must name a collection, was '" + collection + "'");
        }
        Objects.requireNonNull(afterField, "afterField");
        if ((when == When.WHILE_REPLYING) == afterField.isEmpty()) {
            throw new IllegalArgumentException(when == When.WHILE_REPLYING
                    ? "afterField must name a field of the result to hold the reply after"
                    : "afterField is for WHILE_REPLYING only, was '" + afterField + "'");
        }
        if (holdAtMost == null || holdAtMost.isNegative() || holdAtMost.isZero()) {
            throw new IllegalArgumentException("holdAtMost must be positive, was " + holdAtMost);
        }
        command = command.toLowerCase(Locale.ROOT);
    }

    /** {@code command} on {@code collection}, held before the server runs it. */
    public static PausePoint before(String command, String collection) {
        return new PausePoint(When.BEFORE, command, collection, c -> true, "", DEFAULT_HOLD);
    }

    /** {@code command} on {@code collection}, held after the server ran it and before its reply is sent. */
    public static PausePoint after(String command, String collection) {
        return new PausePoint(When.AFTER, command, collection, c -> true, "", DEFAULT_HOLD);
    }

    /**
     * A read ({@code command}: {@code find}, {@code getMore}, {@code aggregate} or {@code findAndModify}) on
     * {@code collection}, held while its reply is sent, once {@code field} of its first result was read.
     */
    public static PausePoint whileReplying(String command, String collection, String field) {
        return new PausePoint(When.WHILE_REPLYING, command, collection, c -> true, field, DEFAULT_HOLD);
    }

    /** This point, holding only a command whose document also satisfies {@code more}. */
    public PausePoint where(Predicate<BsonDocument> more) {
        Objects.requireNonNull(more, "more");
        return new PausePoint(when, command, collection, condition.and(more), afterField, holdAtMost);
    }

    /** This point, with a held command going on by itself after {@code limit}. */
    public PausePoint withHoldAtMost(Duration limit) {
        return new PausePoint(when, command, collection, condition, afterField, limit);
    }

    @Override
    public String toString() {
        return when.name().toLowerCase(Locale.ROOT).replace('_', ' ') + " " + command + " on " + collection
                + (afterField.isEmpty() ? "" : ", after its result's field '" + afterField + "'");
    }
}
