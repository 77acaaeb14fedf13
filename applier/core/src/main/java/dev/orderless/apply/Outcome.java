package dev.orderless.apply;

/**
 * What applying one operation did. Only {@link #APPLIED} changed the document; every other outcome
 * is a normal result of at-least-once, any-order delivery and is returned, never thrown.
 */
public enum Outcome {
    /** The operation was written. */
    APPLIED,
    /** A later operation on the same element or register, or a later delete, already won. Ack it. */
    SUPERSEDED,
    /** This very operation was applied before (a redelivery). Ack it. */
    DUPLICATE,
    /**
     * A different operation with the same {@code (entity, seq)} was applied first and won. The stamper
     * broke its contract; counted and logged, and nothing more can be done here. Ack it.
     */
    SEQ_COLLISION,
    /**
     * Too old to judge: seq at or below the document's compaction floor, and the tombstone that would
     * decide it was compacted away. Not applied and not to be dropped: dead-letter it, with this name as
     * the reason; seeing it means the tombstone grace period is shorter than the oldest delivery.
     */
    BEYOND_HORIZON;

    /**
     * Whether the operation changed the document.
     *
     * @return true only for {@link #APPLIED}
     */
    public boolean isApplied() {
        return this == APPLIED;
    }

    /**
     * Not applied: superseded, duplicate, collision or beyond the horizon.
     *
     * @return true for every outcome but {@link #APPLIED}
     */
    public boolean isStale() {
        return this != APPLIED;
    }

    /**
     * Whether the message must go to the dead-letter queue rather than be acked.
     *
     * @return true only for {@link #BEYOND_HORIZON}
     */
    public boolean needsDeadLetter() {
        return this == BEYOND_HORIZON;
    }

    /**
     * A lower-case tag for metrics and reason headers, e.g. {@code beyond_horizon}.
     *
     * @return the constant's name in lower case
     */
    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
