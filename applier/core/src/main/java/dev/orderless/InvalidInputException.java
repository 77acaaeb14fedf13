package dev.orderless;

/**
 * Bad input: an operation that names an undeclared or forbidden field, a non-positive seq, a value that
 * MongoDB cannot store as given, and the like. Retrying cannot help; the message belongs in the
 * dead-letter queue, with {@link #reason()} as its short reason.
 */
public class InvalidInputException extends CannotApplyException {
    private static final long serialVersionUID = 1L;

    public InvalidInputException(String message) {
        super(Kind.BAD_INPUT, message);
    }

    public InvalidInputException(String message, Throwable cause) {
        super(Kind.BAD_INPUT, message, cause);
    }

    /** For a kind of bad input that callers treat apart ({@link UnknownFieldException}, an unsupported envelope). */
    protected InvalidInputException(Kind kind, String message) {
        super(kind, message);
    }
}
