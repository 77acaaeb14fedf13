package dev.orderless;

/**
 * An operation on a register or set that the collection's schema does not declare: typically a producer
 * that already sends a new field to consumers that do not know it yet. Bad input today, good input once
 * the consumers' schema declares the field: so its dead letters have a kind of their own,
 * {@code unknown_field}, to be replayed once the consumers are upgraded (within the tombstone grace).
 */
public class UnknownFieldException extends InvalidInputException {
    private static final long serialVersionUID = 1L;

    /**
     * An operation on an undeclared register or set, of kind {@link CannotApplyException.Kind#UNKNOWN_FIELD}.
     *
     * @param message which register or set is undeclared, for which operation
     */
    public UnknownFieldException(String message) {
        super(Kind.UNKNOWN_FIELD, message);
    }
}
