package dev.orderless.history;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.time.Instant;

/**
 * One recorded operation and the entity's state after it: every recorded operation of the entity with a seq
 * at or below this one's, applied in seq order.
 *
 * @param op         the operation as received
 * @param recordedAt when it was recorded (the time it reached a consumer, not the time it was stamped)
 * @param after      the state after it, with the meaning of the stored document, tombstones included
 */
public record Version(Operation op, Instant recordedAt, EntityState after) {
    /**
     * The seq of the operation, which orders the entity's versions.
     *
     * @return {@code op().seq()}
     */
    public long seq() {
        return op.seq();
    }
}
