package dev.orderless.consume.internal;

import dev.orderless.TransientException;
import dev.orderless.apply.GuardedApplier;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Tells the two transient worlds apart for one consumer's threads, and bounds how long one message may
 * hold a thread while MongoDB is serving.
 *
 * <p>What is judged is the interval between two consecutive transient failures of one delivery: did
 * MongoDB serve others while this message kept failing? The evidence, in order:
 * <ol>
 *   <li>the error itself shows MongoDB down for everyone ({@link TransientException#backendDown()}):
 *       <em>down</em>;
 *   <li>another delivery of this consumer was answered by MongoDB (applied, stale, or no progress; not
 *       bad input, which is refused before MongoDB is asked) in the interval:
 *       <em>serving</em>;
 *   <li>another delivery saw MongoDB down in the interval: <em>down</em>;
 *   <li>otherwise (nobody else tried, or others failed too and none was answered): ask MongoDB with a
 *       write that matches nothing ({@link GuardedApplier#answersWrites()}): a write, not a read, so
 *       that writes refused for everyone while reads work (a primary stepping down, a cluster out of
 *       quota) count as down, and so that two messages failing on their own do not hold each other up.
 * </ol>
 * One failure alone proves nothing (a cut drops every in-flight operation while others have just
 * completed), and neither does one interval (it may have been down until a moment before its end), so
 * the clock starts at the end of the first interval judged serving, runs while every following interval
 * is judged serving, and resets on down. A message whose clock reaches
 * {@code maxHold} is dead-lettered: MongoDB serves others but keeps failing this one. While the evidence
 * says down, a message holds without limit (nothing is dead-lettered in an outage, and the consumer
 * resumes by itself).
 */
public final class HoldClock {
    private final BooleanSupplier probe;
    private final long maxHoldNanos;
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong sawDown = new AtomicLong();

    /** @param probe true if MongoDB accepts a write now ({@link GuardedApplier#answersWrites()}); asked only
     *              when nothing else tells */
    HoldClock(BooleanSupplier probe, Duration maxHold) {
        this.probe = probe;
        this.maxHoldNanos = maxHold.toNanos();
    }

    /** Where the shared counters stood at one failure. */
    private record Mark(long completed, long sawDown, long atNanos) {
    }

    private Mark mark() {
        return new Mark(completed.get(), sawDown.get(), System.nanoTime());
    }

    /** MongoDB answered a delivery: it is serving. */
    void completed() {
        completed.incrementAndGet();
    }

    /** One delivery's hold. Used by the one thread that holds the delivery. */
    public final class Hold {
        private Mark lastFailure;
        /** Counted in the consumer's retrying gauge since its first failure (see ApplyingHandler#attempt). */
        boolean retrying;
        /** Attempts made so far. */
        int attempts;

        /** Attempts made at the message so far ({@link ApplyingHandler#attempt}). */
        public int attempts() {
            return attempts;
        }
        private long servingSince = -1;
        private Boolean probed;   // the write probe's answer for the current interval, if asked

        /**
         * Called before each retry, after the pause: if nothing else tells yet whether MongoDB served since
         * the last failure, asks the write probe now rather than right after the failure, when the driver,
         * having just lost a connection, may still be looking for the server.
         */
        void beforeRetry() {
            Mark previous = lastFailure;
            probed = previous == null || completed.get() > previous.completed() || sawDown.get() > previous.sawDown()
                    ? null : probe.getAsBoolean();
        }

        /** Judges the interval since the previous failure; true if the message has now held past maxHold. */
        boolean heldTooLong(TransientException failure) {
            if (failure.backendDown()) {
                down();
                return false;
            }
            Mark previous = lastFailure;
            Mark now = mark();
            lastFailure = now;
            Boolean probedThisInterval = probed;
            probed = null;
            if (previous == null) {
                return false;
            }
            if (!serving(previous, now, probedThisInterval)) {
                servingSince = -1;   // this interval proves nothing; others judge theirs by their own evidence
                return false;
            }
            if (servingSince < 0) {
                // the clock starts here, not at the previous failure: the interval may have been down
                // until MongoDB came back a moment ago, and the next attempt may well succeed
                servingSince = now.atNanos();
                return false;
            }
            return now.atNanos() - servingSince >= maxHoldNanos;
        }

        /** MongoDB is down for everyone (or refuses everyone, for a reason of configuration): reset. */
        void down() {
            sawDown.incrementAndGet();
            lastFailure = mark();
            servingSince = -1;
            probed = null;
        }

        /** Seconds this message has held while MongoDB was serving, for the reason. */
        long heldSeconds() {
            return servingSince < 0 ? 0 : Duration.ofNanos(System.nanoTime() - servingSince).toSeconds();
        }
    }

    Hold hold() {
        return new Hold();
    }

    private boolean serving(Mark previous, Mark now, Boolean probed) {
        if (now.completed() > previous.completed()) {
            return true;
        }
        if (now.sawDown() > previous.sawDown()) {
            return false;
        }
        return probed != null ? probed : probe.getAsBoolean();
    }
}
