package dev.orderless;

/**
 * A failure that may pass: the operation was not applied, and applying it again later is safe (every
 * apply is idempotent). Requeue or back off; never drop.
 */
public class TransientException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    public TransientException(String message) {
        super(message);
    }

    public TransientException(String message, Throwable cause) {
        super(message, cause);
    }
}
