package dev.orderless.history;

import java.time.Instant;
import java.util.Optional;

/**
 * What the baseline found in an entity's live document when it took its state into the history.
 *
 * @param horizon    the highest seq the live document showed: every operation applied to it had a seq at or
 *                   below it, so the state taken is the state as of it, up to operations not applied yet (which
 *                   are recorded, or will be, and are merged when read)
 * @param compacted  the document's {@code _gcFloor}: compaction had dropped its tombstones up to this seq, so the
 *                   history cannot tell which elements were removed at or below it (0: none were dropped)
 * @param version    the document's {@code _v}
 * @param at         when it was taken
 * @param unreadable why the document could not be read as an orderless state (an entry of a set that is not a
 *                   document, or whose key is not a string), if it could not: then nothing of it was taken, the
 *                   history vouches for no state of the entity, and a later pass takes it in once it is repaired
 */
record Baseline(long horizon, long compacted, long version, Instant at, Optional<String> unreadable) {
    Baseline(long horizon, long compacted, long version, Instant at) {
        this(horizon, compacted, version, at, Optional.empty());
    }
}
