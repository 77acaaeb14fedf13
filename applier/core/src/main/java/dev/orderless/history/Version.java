package dev.orderless.history;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.time.Instant;

/**
 * One recorded operation and the entity's state either side of it: every recorded operation of the entity with a
 * seq below this one's, applied in seq order, then this one.
 *
 * @param op         the operation as received
 * @param recordedAt when it was recorded (the time it reached a consumer, not the time it was stamped)
 * @param before     the state before it, with the meaning of the stored document, tombstones included
 * @param after      the state after it, likewise
 */
public record Version(Operation op, Instant recordedAt, EntityState before, EntityState after) {
    /**
     * The seq of the operation, which orders the entity's versions.
     *
     * @return {@code op().seq()}
     */
    public long seq() {
        return op.seq();
    }

    /**
     * Whether applying the operation in seq order changed the entity's state, as the live document holds it: an
     * element's seq and attributes, a register's value and seq, a tombstone, the floor, a counter. False where a
     * later operation had overtaken it (a re-add below a removal's seq, an older name, a value a ranked register's
     * winner outranks): superseded; and for an increment of 0. An add of a live element at a higher seq is a change, whether or not its
     * attributes differ: the document's entry is now this operation's.
     *
     * @return true if {@code after} differs from {@code before}
     */
    public boolean changed() {
        return !before.equals(after);
    }
}
