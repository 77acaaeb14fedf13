package dev.orderless.stamp;

/**
 * Gives each message its seq. Whatever the strategy, a stamper must never give one entity the same seq
 * twice: {@code (entity, seq)} names exactly one operation, and two operations sharing it is a seq
 * collision (the first to land wins, the other is lost).
 *
 * <p>Two strategies, with different guarantees:
 * <ul>
 *   <li>{@link MongoCounterStamper}: a counter document per entity; strictly increasing per entity across
 *       every producer process, at one MongoDB round trip per stamp;
 *   <li>{@link HybridLogicalClock}: no round trip; unique across producers through a node id, monotonic
 *       per instance even when the wall clock steps back, and ordered across producers up to clock skew.
 * </ul>
 */
@FunctionalInterface
public interface Stamper {
    /** The next seq for {@code entity}: positive, and never given to this entity before. */
    long next(String entity);
}
