package dev.orderless.history;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.util.List;
import java.util.Optional;

/**
 * What the history holds of one entity, oldest first.
 *
 * @param entity   the entity
 * @param horizon  every operation with a seq at or below it is in {@code folded} and is no longer listed; 0 if
 *                 there is no folded state
 * @param folded   the state as of {@code horizon} (empty at 0): folded by retention, or taken from the live
 *                 document by the baseline ({@code baseline}), with the records at or below the horizon merged
 * @param versions every recorded operation above the horizon, in seq order, each with the states either side of it
 * @param late     operations recorded at or below the horizon that the states above do not include (empty
 *                 normally): below a retention horizon after it was folded (they arrived later than the retention
 *                 period allowed), or an add or remove below the compaction floor the live document had when the
 *                 baseline took it, of an element it had no entry for (the history cannot judge them)
 * @param baseline the folded state was taken from the live document by the baseline: the entity had operations
 *                 before the history was on, and its states are known from the horizon on only
 * @param unknowable why the history cannot vouch that these are the entity's versions, if it cannot (as a read of
 *                 it would say): the history does not know its live collection or its start was never decided, the
 *                 baseline has not taken it in yet and is not complete, or could not read its live document, or the
 *                 live document holds state no record accounts for (applied before the history was on, or by a
 *                 consumer that does not record)
 */
public record Versions(String entity, long horizon, EntityState folded, List<Version> versions, List<Operation> late,
                       boolean baseline, Optional<String> unknowable) {
    /**
     * Copies {@code versions} and {@code late}, so the record is immutable.
     *
     * @param entity     the entity
     * @param horizon    the seq up to which operations are in {@code folded}; 0 if there is no folded state
     * @param folded     the state as of {@code horizon}
     * @param versions   every recorded operation above the horizon, in seq order, each with the state after it
     * @param late       operations at or below the horizon that the states above do not include
     * @param baseline   the folded state was taken from the live document by the baseline
     * @param unknowable why the history cannot vouch for these versions, if it cannot
     */
    public Versions {
        versions = List.copyOf(versions);
        late = List.copyOf(late);
    }

    /**
     * The state after the last recorded operation: what the live document holds once every one was applied.
     *
     * @return the last version's state, or {@code folded} if there is none
     */
    public EntityState current() {
        return versions.isEmpty() ? folded : versions.get(versions.size() - 1).after();
    }
}
