package dev.orderless;

/**
 * Bad input: an operation that names an undeclared or forbidden field, a non-positive seq, a value that
 * MongoDB cannot store as given, and the like. Retrying cannot help; the message belongs in the
 * dead-letter queue, with {@link #reason()} as its short reason.
 */
public class InvalidInputException extends CannotApplyException {
    private static final long serialVersionUID = 1L;

    /**
     * Bad input, of kind {@link CannotApplyException.Kind#BAD_INPUT}.
     *
     * @param message what is wrong with the operation
     */
    public InvalidInputException(String message) {
        super(Kind.BAD_INPUT, message);
    }

    /**
     * Bad input, of kind {@link CannotApplyException.Kind#BAD_INPUT}, found through {@code cause}.
     *
     * @param message what is wrong with the operation
     * @param cause   the error that showed it (a value the driver cannot encode as BSON, say)
     */
    public InvalidInputException(String message, Throwable cause) {
        super(Kind.BAD_INPUT, message, cause);
    }

    /**
     * For a kind of bad input that callers treat apart ({@link UnknownFieldException}, an unsupported envelope).
     *
     * @param kind    the kind the dead letter is counted and replayed under; not null
     * @param message what is wrong with the operation
     * @throws IllegalArgumentException if {@code kind} is null
     */
    protected InvalidInputException(Kind kind, String message) {
        super(kind, message);
    }
}
