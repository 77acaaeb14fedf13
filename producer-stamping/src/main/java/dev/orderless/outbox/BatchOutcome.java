package dev.orderless.outbox;

import dev.orderless.apply.Operation;
import dev.orderless.publish.PublishFailedException;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What became of one claimed batch the relay published, and what the relay does next. Nothing is removed
 * unless the broker confirmed it.
 *
 * <ol>
 *   <li>No failure: every operation was confirmed.
 *   <li>A failure names the operations not confirmed; one naming none names them all (the relay cannot
 *       tell which went through, so it keeps every one).
 *   <li>Of those, the ones the publisher refused before they reached the broker are the entries' own
 *       fault ({@link #refused()}); the rest were not taken by the broker ({@link #notTaken()}), the broker's
 *       state and never the entries'.
 * </ol>
 *
 * @param confirmed what the broker confirmed: removed from the outbox
 * @param refused   what could not be sent at all, with why: given back to be counted against the entry
 * @param notTaken  what the broker did not take: released, due again after the back-off
 * @param why       the publisher's failure, empty if none
 */
record BatchOutcome(List<Operation> confirmed, Map<Operation, String> refused, List<Operation> notTaken, String why) {
    /** What the relay does after the batch. */
    enum Next {
        /** Go on at once. */
        CONTINUE,
        /** Back off: the broker did not take some of it. */
        BACK_OFF_NOT_TAKEN,
        /** Back off: nothing went through and every message was refused, the entries' fault or everyone's. */
        BACK_OFF_NONE_WENT_THROUGH
    }

    /** Every operation confirmed. */
    static BatchOutcome allConfirmed(List<Operation> ops) {
        return new BatchOutcome(List.copyOf(ops), Map.of(), List.of(), "");
    }

    /** The outcome of publishing {@code ops} when the publisher failed with {@code failure}. */
    static BatchOutcome of(List<Operation> ops, PublishFailedException failure) {
        Set<Operation> failed = failure.failed().isEmpty() ? new HashSet<>(ops) : new HashSet<>(failure.failed());
        Map<Operation, String> refused = new LinkedHashMap<>(failure.refused());
        refused.keySet().retainAll(new HashSet<>(ops));
        List<Operation> confirmed = ops.stream().filter(op -> !failed.contains(op) && !refused.containsKey(op)).toList();
        List<Operation> notTaken = ops.stream().filter(op -> failed.contains(op) && !refused.containsKey(op)).toList();
        return new BatchOutcome(confirmed, Collections.unmodifiableMap(refused), notTaken, failure.getMessage());
    }

    /** Whether other entries went through: evidence that a refused one is at fault itself. */
    boolean someConfirmed() {
        return !confirmed.isEmpty();
    }

    Next next() {
        if (!notTaken.isEmpty()) {
            return Next.BACK_OFF_NOT_TAKEN;
        }
        if (!refused.isEmpty() && confirmed.isEmpty()) {
            return Next.BACK_OFF_NONE_WENT_THROUGH;
        }
        return Next.CONTINUE;
    }
}
