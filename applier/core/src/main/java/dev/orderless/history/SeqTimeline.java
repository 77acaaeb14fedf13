package dev.orderless.history;

import java.time.Instant;

/**
 * Where a point in time falls among seqs, for stamps that are times (a hybrid logical clock's): the highest
 * seq a stamper could have given at or before an instant. {@code HybridLogicalClock.timeline()} in
 * {@code orderless-producer-stamping} is one.
 */
@FunctionalInterface
public interface SeqTimeline {
    /**
     * The highest seq a stamper could have given at or before {@code instant}.
     *
     * @param instant the time asked for
     * @return the seq; every operation stamped at or before {@code instant} has a seq at or below it
     */
    long lastSeqAt(Instant instant);
}
