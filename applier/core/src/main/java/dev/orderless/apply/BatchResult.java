package dev.orderless.apply;

import dev.orderless.CannotApplyException;
import dev.orderless.OrderlessException;

/**
 * What {@link GuardedApplier#applyAll} did with one operation: exactly what {@link GuardedApplier#apply}
 * would have returned or thrown for it alone.
 */
public sealed interface BatchResult {

    /**
     * The operation this result is for.
     *
     * @return the op of the batch, as given
     */
    Operation op();

    /**
     * Applied, or found stale: {@link GuardedApplier#apply} would have returned {@code outcome}.
     *
     * @param op      the operation
     * @param outcome what applying it did
     */
    record Done(Operation op, Outcome outcome) implements BatchResult {
    }

    /**
     * Can never be applied (bad input, no progress, too large): dead-letter it with {@code reason}.
     *
     * @param op     the operation
     * @param reason why it cannot be applied; nothing of it was written
     */
    record Refused(Operation op, CannotApplyException reason) implements BatchResult {
    }

    /**
     * Not applied this time: a {@link dev.orderless.TransientException} (apply it again later; safe) or an
     * {@link dev.orderless.InvalidConfigurationException} (hold it and fix the set-up).
     *
     * @param op    the operation
     * @param error why it was not applied this time
     */
    record Failed(Operation op, OrderlessException error) implements BatchResult {
    }
}
