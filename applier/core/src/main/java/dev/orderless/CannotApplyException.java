package dev.orderless;

import java.util.Locale;

/**
 * This operation can never be applied as it stands: retrying cannot help, and the message belongs in the
 * dead-letter queue with {@link #reason()} as its one-line reason. {@link #kind()} says why, for metrics:
 *
 * <ul>
 *   <li>{@link Kind#BAD_INPUT}: the operation itself is wrong (see {@link InvalidInputException});
 *   <li>{@link Kind#UNKNOWN_FIELD}: it names a register or set this collection's schema does not declare
 *       (yet: see {@link UnknownFieldException}); once it does, the dead letter can be replayed;
 *   <li>{@link Kind#UNSUPPORTED_ENVELOPE}: its message is in an envelope this consumer does not read (a newer
 *       version, or a member a strict consumer refuses); once it does, the dead letter can be replayed;
 *   <li>{@link Kind#NO_PROGRESS}: MongoDB and orderless disagree about this document (a unique secondary
 *       index, a stored value of the wrong type, a write the server refuses), so the guarded write can
 *       never match; the reason starts with {@code no progress:} and names the cause;
 *   <li>{@link Kind#TOO_LARGE}: the write or the document it would make is past MongoDB's 16 MB limit.
 * </ul>
 *
 * Nothing was written by the failed apply.
 */
public class CannotApplyException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    /** Why an operation cannot be applied. */
    public enum Kind {
        /** The operation itself is wrong (see {@link InvalidInputException}); replaying it cannot help. */
        BAD_INPUT,
        /** It names a register, set or counter the schema does not declare (yet); replayable once the schema does. */
        UNKNOWN_FIELD,
        /** Its message is in an envelope this consumer does not read; replayable once a consumer reads it. */
        UNSUPPORTED_ENVELOPE,
        /** The stored document keeps the guarded write from ever matching; the reason names the cause. */
        NO_PROGRESS,
        /** The write, or the document it would make, is past MongoDB's 16 MB limit. */
        TOO_LARGE;

        /**
         * A lower-case tag for metrics, e.g. {@code no_progress}.
         *
         * @return the constant's name in lower case, the same in every locale
         */
        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why the operation cannot be applied; never null. */
    private final Kind kind;

    /**
     * An operation that can never be applied, for the given reason.
     *
     * @param kind    why; not null
     * @param message what is wrong with the operation
     * @throws IllegalArgumentException if {@code kind} is null
     */
    public CannotApplyException(Kind kind, String message) {
        super(message);
        this.kind = requireKind(kind);
    }

    /**
     * An operation that can never be applied, for the given reason, found through {@code cause}.
     *
     * @param kind    why; not null
     * @param message what is wrong with the operation
     * @param cause   the error that showed it (MongoDB's refusal, say)
     * @throws IllegalArgumentException if {@code kind} is null
     */
    public CannotApplyException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = requireKind(kind);
    }

    private static Kind requireKind(Kind kind) {
        if (kind == null) {
            throw new IllegalArgumentException("kind must not be null");
        }
        return kind;
    }

    /**
     * Why the operation cannot be applied, for metrics and for telling replayable dead letters apart.
     *
     * @return the kind; never null
     */
    public Kind kind() {
        return kind;
    }

    /**
     * A short, single-line reason, fit for a message header.
     *
     * @return the message with its line breaks and tabs turned into spaces and trimmed; the kind's
     *         {@link Kind#tag()} if there is no message (an empty message gives an empty reason)
     */
    public String reason() {
        String message = getMessage();
        return message == null ? kind.tag() : message.replaceAll("[\\r\\n\\t]+", " ").strip();
    }
}
