package dev.orderless.history;

/**
 * What one retention pass did.
 *
 * @param entities entities whose old records were folded into their state
 * @param folded   records folded and dropped
 * @param late     records found below their entity's horizon, recorded after it was folded (kept, and logged):
 *                 they arrived later than the retention period allows
 * @param complete false if the pass ended early (its lease lost, or stopped)
 */
public record RetentionPass(long entities, long folded, long late, boolean complete) {
}
