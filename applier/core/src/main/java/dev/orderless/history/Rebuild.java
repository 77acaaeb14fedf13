package dev.orderless.history;

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
 */
public record Rebuild(long entities, long operations, long applied, long beyondHorizon, long refused, long failed) {
    /** Everything was written or found there already. */
    public boolean complete() {
        return refused == 0 && failed == 0;
    }
}
