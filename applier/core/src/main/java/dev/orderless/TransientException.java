package dev.orderless;

/**
 * A failure that may pass: the operation was not applied, and applying it again later is safe (every
 * apply is idempotent). Requeue or back off; never drop.
 *
 * <p>{@link #backendDown()} tells the two transient worlds apart where the error itself can: true when
 * MongoDB is unreachable or has no primary (server selection timed out, connection refused, not primary,
 * recovering, write concern not satisfied), which fails every operation, not just this one. False means
 * the error alone cannot say (a connection dropped mid-operation, an operation timeout, a document too
 * contended): the consumer then looks at whether other messages are being applied.
 */
public class TransientException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    /** True if the error shows MongoDB unavailable to every operation, not just this one. */
    private final boolean backendDown;

    /**
     * A transient failure not known to be MongoDB down for everyone: {@link #backendDown()} is false.
     *
     * @param message what failed
     */
    public TransientException(String message) {
        this(message, null, false);
    }

    /**
     * A transient failure not known to be MongoDB down for everyone: {@link #backendDown()} is false.
     *
     * @param message what failed
     * @param cause   the error that made it fail
     */
    public TransientException(String message, Throwable cause) {
        this(message, cause, false);
    }

    /**
     * A transient failure, saying whether it shows MongoDB down for everyone.
     *
     * @param message     what failed
     * @param cause       the error that made it fail; may be null
     * @param backendDown true if the error shows MongoDB unreachable or without a primary
     */
    public TransientException(String message, Throwable cause, boolean backendDown) {
        super(message, cause);
        this.backendDown = backendDown;
    }

    /**
     * True if the error shows MongoDB unavailable to everyone, not just to this operation.
     *
     * @return true if MongoDB is down for every operation; false if the error alone cannot say
     */
    public boolean backendDown() {
        return backendDown;
    }
}
