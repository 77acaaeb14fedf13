/**
 * Chaos runs for a team's own collection: its {@link dev.orderless.apply.CollectionSchema}, its operations (from a
 * generator written with {@link dev.orderless.testing.chaos.Stamps}, or a recorded history: the version history,
 * or a file of envelopes), and its consumers, built the way the team builds them
 * ({@link dev.orderless.testing.chaos.ConsumerFactory}).
 *
 * <p>Guarantees of a {@link dev.orderless.testing.chaos.ChaosRun}: the operations are published to a real broker
 * shuffled, with the duplicates asked for, each confirmed; N consumers apply them while the faults asked for are
 * injected (a consumer killed and replaced, the consumers' broker or MongoDB connections cut and restored); the run
 * waits, bounded, until nothing is left in the queue, then compares every stored document with the reference
 * model's state of the operations ({@link dev.orderless.oracle.ReferenceModel}). It prints the same {@code [chaos]}
 * row the project's own suite prints, with its seed; the same seed publishes the same history in the same order.
 * Where documents diverge, the run shrinks the history of one diverged entity, replayed one message at a time
 * through one consumer of the team's, to the fewest operations and the delivery order closest to seq order that
 * still diverge, and prints them as envelopes with the expected state and the stored document
 * ({@link dev.orderless.testing.chaos.Counterexample}).
 */
package dev.orderless.testing.chaos;
