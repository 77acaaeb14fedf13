package dev.orderless.consume.internal;

import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.history.RecordingApplier;
import java.util.List;

/**
 * What a listener does with a decoded operation: apply it, or, with the history on, record it and then
 * apply it ({@link RecordingApplier}). Same outcomes, refusals and failures either way.
 */
public interface Applying {
    Outcome apply(Operation op);

    List<BatchResult> applyAll(List<Operation> ops);

    static Applying by(GuardedApplier applier) {
        return new Applying() {
            @Override
            public Outcome apply(Operation op) {
                return applier.apply(op);
            }

            @Override
            public List<BatchResult> applyAll(List<Operation> ops) {
                return applier.applyAll(ops);
            }
        };
    }

    static Applying recorded(RecordingApplier recording) {
        return new Applying() {
            @Override
            public Outcome apply(Operation op) {
                return recording.apply(op);
            }

            @Override
            public List<BatchResult> applyAll(List<Operation> ops) {
                return recording.applyAll(ops);
            }
        };
    }
}
