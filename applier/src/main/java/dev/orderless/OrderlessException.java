package dev.orderless;

/**
 * The root of every exception orderless throws. Unchecked: callers act on the two subclasses that
 * call for different handling, and let anything else propagate.
 *
 * <ul>
 *   <li>{@link InvalidInputException}: the message or operation can never be applied (dead-letter it);
 *   <li>{@link TransientException}: try again later (requeue or back off); nothing was lost.
 * </ul>
 *
 * A bad configuration is reported with {@link InvalidConfigurationException} at start-up.
 */
public class OrderlessException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public OrderlessException(String message) {
        super(message);
    }

    public OrderlessException(String message, Throwable cause) {
        super(message, cause);
    }
}
