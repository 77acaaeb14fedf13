package dev.orderless.history;

/**
 * What one baseline pass did ({@link History#baseline}).
 *
 * @param documents live documents read (those with no orderless state in them are read and left)
 * @param baselined entities with no folded state whose live state became it
 * @param joined    entities whose folded state was joined with their live state: folded by retention (perhaps from
 *                  records that did not start from an empty document), or taken by an earlier baseline, after which
 *                  state was applied without being recorded
 * @param vouched   entities taken by an earlier baseline whose history explains their live document: left as they
 *                  were, so a repeated pass changes nothing
 * @param complete  false if the pass ended early (its lease lost, or stopped): the next resumes after the last
 *                  document it finished
 */
public record BaselinePass(long documents, long baselined, long joined, long vouched, boolean complete) {
}
