/**
 * The convergence model and its guarded apply. {@link dev.orderless.apply.CollectionSchema} declares a
 * collection's sets (with tombstones) and registers; {@link dev.orderless.apply.GuardedApplier} applies an
 * {@link dev.orderless.apply.Operation} with one sequence-guarded atomic update and returns an
 * {@link dev.orderless.apply.Outcome}. Guarantee: for any delivery order, any duplicates and any number of
 * concurrent appliers, the stored document equals what applying the entity's operations once each, in
 * increasing seq order, gives; nothing is locked, and the common case reads nothing first.
 * {@link dev.orderless.apply.TombstoneCompactor} drops tombstones older than a grace and raises the floor
 * below which an operation whose tombstone is gone is refused as beyond the horizon, never guessed.
 */
package dev.orderless.apply;
