/**
 * Stampers give each operation its seq. {@link dev.orderless.stamp.MongoCounterStamper}: strictly increasing
 * per entity across every producer (a MongoDB round trip each). {@link dev.orderless.stamp.HybridLogicalClock}:
 * no round trip, monotonic per process, unique across producers with distinct node ids, ordered across
 * producers up to clock skew.
 */
package dev.orderless.stamp;
