package dev.orderless.history;

/**
 * What one baseline pass did ({@link History#baseline}).
 *
 * @param documents  live documents read (those with no orderless state in them are read and left)
 * @param baselined  entities with no folded state whose live state became it
 * @param joined     entities whose folded state was joined with their live state: folded by retention (perhaps from
 *                   records that did not start from an empty document), or taken by an earlier baseline, after which
 *                   state was applied without being recorded
 * @param vouched    entities taken by an earlier baseline whose history explains their live document: left as they
 *                   were, so a repeated pass changes nothing
 * @param unreadable live documents that could not be read as an orderless state (an entry of a set that is not a
 *                   document, or whose key is not a string; each named in a WARN line): nothing of them was taken,
 *                   their reads say they cannot tell and a rebuild leaves them out; the pass goes on past them, and a
 *                   pass after they were repaired takes them in
 * @param complete   false if the pass ended early (its lease lost, or stopped): the next resumes after the last
 *                   document it finished
 */
public record BaselinePass(long documents, long baselined, long joined, long vouched, long unreadable,
                           boolean complete) {
}
