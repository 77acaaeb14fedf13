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
 * A record that collides with a different operation of the same seq is still applied: the applier decides
 * which one the live document keeps, and both count the collision.
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
        this.history = history;
        this.applier = applier;
    }

    public GuardedApplier applier() {
        return applier;
    }

    public History history() {
        return history;
    }

    /** {@link GuardedApplier#apply}, recorded first. */
    public Outcome apply(Operation op) {
        applier.validate(op);
        history.record(op);
        return applier.apply(op);
    }

    /** {@link GuardedApplier#applyAll}, the batch recorded first with one insert. */
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
                history.recordAll(valid);
                applied = applier.applyAll(valid);
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
