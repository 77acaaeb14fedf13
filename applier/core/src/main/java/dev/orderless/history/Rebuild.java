package dev.orderless.history;

import java.util.List;

/**
 * What a rebuild did.
 *
 * @param entities   entities rebuilt
 * @param operations operations applied through the target applier (including those standing for a folded state)
 * @param applied       of those, applied now (the rest were there already: superseded or duplicates)
 * @param beyondHorizon of those, not judged: at or below a target document's compaction floor with their tombstone
 *                      gone (normal into a compacted live collection, where their effect is gone or was overwritten;
 *                      into a new collection there are none). Rebuild into a new collection for an exact copy
 * @param refused       refused by the target applier (no progress, too large): listed in the log, not written
 * @param failed        not applied after the rebuild's attempts (MongoDB unavailable): rebuild again
 * @param unrestored    entities left out, because the history cannot vouch for their state (not written at all,
 *                      rather than written wrong): their live document holds state no record accounts for (they
 *                      had operations before the history was on, and the baseline has not taken them), or an
 *                      operation of theirs is below the compaction floor their live document had when the baseline
 *                      took it, where the history cannot judge it, or their latest state reads Unknowable (compaction
 *                      dropped tombstones the history cannot account for, and no delete has superseded them), or the
 *                      baseline could not read their live document
 * @param reasons       why, one line per entity left out (the first 100; each is also logged)
 */
public record Rebuild(long entities, long operations, long applied, long beyondHorizon, long refused, long failed,
                      long unrestored, List<String> reasons) {
    /**
     * Copies {@code reasons}, so the record is immutable.
     *
     * @param entities      entities rebuilt
     * @param operations    operations applied through the target applier
     * @param applied       of those, applied now
     * @param beyondHorizon of those, not judged: at or below a target document's compaction floor
     * @param refused       refused by the target applier
     * @param failed        not applied after the rebuild's attempts
     * @param unrestored    entities left out, because the history cannot vouch for their state
     * @param reasons       why, one line per entity left out (the first 100)
     */
    public Rebuild {
        reasons = List.copyOf(reasons);
    }

    /**
     * Everything was written or found there already.
     *
     * @return true if nothing was refused, failed, or left out
     */
    public boolean complete() {
        return refused == 0 && failed == 0 && unrestored == 0;
    }
}
