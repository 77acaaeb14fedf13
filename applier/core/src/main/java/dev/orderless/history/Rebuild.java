package dev.orderless.history;

/**
 * What a rebuild did.
 *
 * @param entities   entities rebuilt
 * @param operations operations applied through the target applier (including those standing for a folded state)
 * @param applied    of those, applied now (the rest were there already: superseded or duplicates)
 * @param refused    refused by the target applier (no progress, too large): listed in the log, not written
 * @param failed     not applied after the rebuild's attempts (MongoDB unavailable): rebuild again
 */
public record Rebuild(long entities, long operations, long applied, long refused, long failed) {
    /** Everything was written or found there already. */
    public boolean complete() {
        return refused == 0 && failed == 0;
    }
}
