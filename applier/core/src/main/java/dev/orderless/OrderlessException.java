package dev.orderless;

/**
 * The root of every exception orderless throws. Unchecked: callers act on the subclasses that call for
 * different handling, and let anything else propagate.
 *
 * <ul>
 *   <li>{@link CannotApplyException}: this operation can never be applied (dead-letter it); its
 *       {@link CannotApplyException#kind()} says why: bad input ({@link InvalidInputException}), no
 *       progress possible on the stored document, or too large;
 *   <li>{@link TransientException}: try again later (requeue or back off); nothing was lost;
 *   <li>{@link InvalidConfigurationException}: the set-up cannot work (at start-up, or when MongoDB
 *       refuses every write for a reason of configuration such as permissions); fix it, do not retry it.
 * </ul>
 */
public class OrderlessException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * An orderless failure with no underlying cause.
     *
     * @param message what went wrong
     */
    public OrderlessException(String message) {
        super(message);
    }

    /**
     * An orderless failure caused by another error.
     *
     * @param message what went wrong
     * @param cause   the underlying error; may be null
     */
    public OrderlessException(String message, Throwable cause) {
        super(message, cause);
    }
}
