package dev.orderless;

/**
 * Bad input: an operation that names an undeclared or forbidden field, a non-positive seq, and the
 * like. Retrying cannot help; the message belongs in the dead-letter queue, with {@link #reason()} as
 * its short reason.
 */
public class InvalidInputException extends OrderlessException {
    private static final long serialVersionUID = 1L;

    public InvalidInputException(String message) {
        super(message);
    }

    /** A short, single-line reason, fit for a message header. */
    public String reason() {
        return getMessage();
    }
}
