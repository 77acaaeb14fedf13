package dev.orderless.demo;

import java.time.Duration;

/**
 * When {@code run}'s wait for the view compares the rosters with the students. A comparison reads every
 * student and every roster from the server the feeder is writing to: at 100,000 students (about 16,000
 * documents and rosters of a thousand entries) it took a large share of the 2 cores here, every 100 ms,
 * from the feeder it was waiting for, and the view lag it measured grew with it.
 *
 * <ol>
 *   <li>Compare when the view applied no event since the previous look: it has stopped moving, and is
 *       either caught up or stuck.
 *   <li>Otherwise compare anyway once {@code every} has passed since the last comparison, so a view that
 *       keeps applying events after it matched (events that change nothing) is still seen to match.
 * </ol>
 * A comparison is skipped only while the view is still applying events, so the lag reported is never
 * earlier than the first time the rosters matched; at most a look later while the view settles. Pure.
 */
final class ComparePacing {
    private final long everyNanos;
    private double seen = Double.NaN;
    private long lastCompared;

    /** {@code now}: {@link System#nanoTime()} when the wait starts, which counts as a comparison. */
    ComparePacing(Duration every, long now) {
        this.everyNanos = every.toNanos();
        this.lastCompared = now;
    }

    /** Whether to compare now, given the view events applied so far; a yes counts as a comparison. */
    boolean compareNow(double viewEvents, long now) {
        boolean compare = viewEvents == seen || now - lastCompared >= everyNanos;
        seen = viewEvents;
        if (compare) {
            lastCompared = now;
        }
        return compare;
    }
}
