package dev.orderless.history;

import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.TransientException;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Records each operation in a {@link History}, then applies it with a {@link GuardedApplier}: what a consumer
 * does when the history is on. Same outcomes, refusals and failures as the applier's, in the same shapes.
 *
 * <ol>
 *   <li>Validate against the schema: bad input is refused (and dead-lettered by a consumer), not recorded.
 *   <li>Record. If MongoDB does not acknowledge it, nothing is applied: the failure is the op's, and applying
 *       again (a redelivery) records again.
 *   <li>Apply. An op beyond the compaction horizon is recorded and then refused by the applier: the history
 *       holds it (and its states include it, which is what the producer meant), the live document does not.
 * </ol>
 * A record that collides with a different operation recorded before with the same {@code (entity, seq)} is
 * not applied: it ends as a {@link Outcome#SEQ_COLLISION} (counted and logged by the history), so the first
 * operation recorded is the one the live document keeps too, even when it was recorded by a consumer that died
 * before applying it. The history's write concern must be as strong as the live collection's (a record lost in
 * a failover while its apply survives would leave the document outside its history): a weaker one is refused.
 */
public final class RecordingApplier {
    private final History history;
    private final GuardedApplier applier;

    RecordingApplier(History history, GuardedApplier applier) {
        if (applier == null) {
            throw new InvalidConfigurationException("recording applier: the applier is required");
        }
        if (!history.schema().equals(applier.schema())) {
            throw new InvalidConfigurationException("recording applier: the history's schema " + history.schema()
                    + " is not the applier's " + applier.schema() + "; build both from the same CollectionSchema");
        }
        if (history.live().isPresent() && !history.live().get().getNamespace().equals(applier.reads().getNamespace())) {
            throw new InvalidConfigurationException("recording applier: the history is the history of "
                    + history.live().get().getNamespace() + " and the applier writes " + applier.reads().getNamespace()
                    + "; give the history the applier's collection (History.withLive)");
        }
        if (applier.reads().getWriteConcern().getWObject() instanceof String w && w.equals("majority")
                && !Objects.equals(history.collection().getWriteConcern().getWObject(), "majority")) {
            throw new InvalidConfigurationException("recording applier: the live collection is written with w: majority"
                    + " and the history " + history.collection().getNamespace().getCollectionName() + " with "
                    + history.collection().getWriteConcern() + "; a record lost in a failover while its apply"
                    + " survives would leave the document outside its history: give the history w: majority too");
        }
        this.history = history;
        this.applier = applier;
    }

    /**
     * The applier each operation is applied with once it is recorded.
     *
     * @return the applier given to {@link History#recording}
     */
    public GuardedApplier applier() {
        return applier;
    }

    /**
     * The history each operation is recorded in before it is applied.
     *
     * @return the history this applier was made by
     */
    public History history() {
        return history;
    }

    /**
     * {@link GuardedApplier#apply}, recorded first.
     *
     * @param op the operation, as received
     * @return the applier's outcome, or {@link Outcome#SEQ_COLLISION} (not applied) if a different operation with
     *         the same {@code (entity, seq)} was recorded first
     * @throws dev.orderless.InvalidInputException if {@code op} names a field the schema does not allow (not recorded)
     * @throws TransientException if the record was not acknowledged (nothing applied) or MongoDB is unavailable for
     *                            the apply; applying again is safe. Otherwise fails as {@link GuardedApplier#apply} does
     */
    public Outcome apply(Operation op) {
        applier.validate(op);
        if (history.record(op) == Recorded.COLLISION) {
            return Outcome.SEQ_COLLISION;   // the operation recorded first wins here as on the document
        }
        return applier.apply(op);
    }

    /**
     * {@link GuardedApplier#applyAll}, the batch recorded first with one insert.
     *
     * @param ops the operations, as received
     * @return one result per op, in the order given: an invalid op refused (not recorded), a collision done as
     *         {@link Outcome#SEQ_COLLISION}; if the batch could not be recorded, every valid op failed (apply again)
     */
    public List<BatchResult> applyAll(List<Operation> ops) {
        BatchResult[] results = new BatchResult[ops.size()];
        List<Operation> valid = new ArrayList<>();
        List<Integer> validAt = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            try {
                applier.validate(ops.get(i));
                valid.add(ops.get(i));
                validAt.add(i);
            } catch (CannotApplyException e) {
                results[i] = new BatchResult.Refused(ops.get(i), e);
            }
        }
        if (!valid.isEmpty()) {
            List<BatchResult> applied;
            try {
                List<Recorded> recorded = history.recordAll(valid);
                List<Operation> toApply = new ArrayList<>();
                for (int k = 0; k < valid.size(); k++) {
                    if (recorded.get(k) != Recorded.COLLISION) {
                        toApply.add(valid.get(k));
                    }
                }
                List<BatchResult> outcomes = applier.applyAll(toApply);
                applied = new ArrayList<>();
                for (int k = 0, a = 0; k < valid.size(); k++) {
                    applied.add(recorded.get(k) == Recorded.COLLISION
                            ? new BatchResult.Done(valid.get(k), Outcome.SEQ_COLLISION) : outcomes.get(a++));
                }
            } catch (OrderlessException e) {
                // a batch refused as a whole (too large for the driver, say) may be one op's doing: each op,
                // applied on its own, tells whose
                OrderlessException each = e instanceof CannotApplyException ? new TransientException("batch not"
                        + " recorded as a whole (" + e.getMessage() + "); apply its ops on their own", e) : e;
                applied = valid.stream().map(op -> (BatchResult) new BatchResult.Failed(op, each)).toList();
            }
            for (int k = 0; k < valid.size(); k++) {
                results[validAt.get(k)] = applied.get(k);
            }
        }
        return List.of(results);
    }
}
