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
        BAD_INPUT, UNKNOWN_FIELD, UNSUPPORTED_ENVELOPE, NO_PROGRESS, TOO_LARGE;

        /** A lower-case tag for metrics, e.g. {@code no_progress}. */
        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Kind kind;

    public CannotApplyException(Kind kind, String message) {
        super(message);
        this.kind = requireKind(kind);
    }

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

    public Kind kind() {
        return kind;
    }

    /** A short, single-line reason, fit for a message header. */
    public String reason() {
        String message = getMessage();
        return message == null ? kind.tag() : message.replaceAll("[\\r\\n\\t]+", " ").strip();
    }
}
