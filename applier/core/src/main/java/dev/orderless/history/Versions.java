package dev.orderless.history;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.util.List;

/**
 * What the history holds of one entity, oldest first.
 *
 * @param entity   the entity
 * @param horizon  every operation with a seq at or below it was folded into {@code folded} by retention and is
 *                 no longer listed; 0 if none was
 * @param folded   the state as of {@code horizon} (empty at 0)
 * @param versions every recorded operation above the horizon, in seq order, each with the state after it
 * @param late     operations recorded below the horizon after it was folded: they arrived later than the
 *                 retention period allowed, and the states above do not include them (empty normally)
 */
public record Versions(String entity, long horizon, EntityState folded, List<Version> versions, List<Operation> late) {
    public Versions {
        versions = List.copyOf(versions);
        late = List.copyOf(late);
    }

    /** The state after the last recorded operation: what the live document holds once every one was applied. */
    public EntityState current() {
        return versions.isEmpty() ? folded : versions.get(versions.size() - 1).after();
    }
}
