/**
 * Version history: every operation applied to a collection, recorded once per {@code (entity, seq)}, so that any
 * entity's state as of any seq can be computed, audited and rebuilt.
 *
 * <p>Guarantees: {@link dev.orderless.history.History#record} runs before the apply, so the history is always a
 * superset of what was applied (a crash between the two is healed by redelivery: the second record is a
 * duplicate); the state as of seq N is the reference semantics of the recorded operations with seq &lt;= N
 * ({@link dev.orderless.oracle.ReferenceModel}), tombstones included, so it does not depend on the order in
 * which the operations arrived; a read that the history can no longer answer (below a retention horizon)
 * says so and never returns a state. {@link dev.orderless.history.RetentionSchedule} folds old records into
 * one state per entity under a lease, at most one pass per interval across processes.
 *
 * <p>Turned on for a collection that already has data, the history cannot tell the entities' states from their
 * records alone: {@link dev.orderless.history.HistoryBaseline} takes each live document into the history (once,
 * under a lease, beside the consumers), the state as of the highest seq the document shows, and reads answer
 * from that seq on; until then, a read of an entity whose live document holds state no record accounts for says
 * so. Reads answer only where the history knows its live collection ({@link dev.orderless.history.History#withLive})
 * and its start was decided ({@link dev.orderless.history.History#beginBaseline}); elsewhere each names the call.
 */
package dev.orderless.history;
