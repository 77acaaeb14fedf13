package dev.orderless.amqp;

import dev.orderless.TransientException;
import dev.orderless.apply.GuardedApplier;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tells the two transient worlds apart for one consumer's threads, and bounds how long one message may
 * hold a thread while MongoDB is serving.
 *
 * <p>After each transient failure of a delivery, the evidence, in order:
 * <ol>
 *   <li>the error itself shows MongoDB down for everyone ({@link TransientException#backendDown()}):
 *       <em>down</em>;
 *   <li>another delivery of this consumer completed (applied, stale or refused) since this attempt began:
 *       <em>serving</em>;
 *   <li>another delivery saw MongoDB down since this attempt began: <em>down</em>;
 *   <li>nobody else tried: ask MongoDB ({@link GuardedApplier#ping()}).
 * </ol>
 * While the evidence says down, a message holds without limit (nothing is dead-lettered in an outage, and
 * the consumer resumes by itself). Once it says serving, the hold clock runs from the start of that
 * attempt; evidence of down stops and resets it. A message whose clock reaches {@code maxHold} is
 * dead-lettered: MongoDB serves others but keeps failing this one.
 */
final class HoldClock {
    private final GuardedApplier applier;
    private final long maxHoldNanos;
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong sawDown = new AtomicLong();

    HoldClock(GuardedApplier applier, Duration maxHold) {
        this.applier = applier;
        this.maxHoldNanos = maxHold.toNanos();
    }

    /** Where the shared counters stood when an attempt began. */
    record Mark(long completed, long sawDown, long atNanos) {
    }

    Mark mark() {
        return new Mark(completed.get(), sawDown.get(), System.nanoTime());
    }

    /** A delivery completed: MongoDB answered it. */
    void completed() {
        completed.incrementAndGet();
    }

    /** One delivery's hold: when MongoDB was first seen serving others while this message kept failing. */
    final class Hold {
        private long servingSince = -1;

        /**
         * Judges the evidence after {@code failure} of the attempt that began at {@code before}.
         *
         * @return true if this message has now held past {@code maxHold} while MongoDB was serving
         */
        boolean heldTooLong(TransientException failure, Mark before) {
            if (serving(failure, before)) {
                if (servingSince < 0) {
                    servingSince = before.atNanos();
                }
                return System.nanoTime() - servingSince >= maxHoldNanos;
            }
            sawDown.incrementAndGet();
            servingSince = -1;
            return false;
        }

        /** MongoDB is down for everyone (a configuration refusal, say): the clock stops. */
        void down() {
            sawDown.incrementAndGet();
            servingSince = -1;
        }

        /** Seconds this message has held while MongoDB was serving, for the reason. */
        long heldSeconds() {
            return servingSince < 0 ? 0 : Duration.ofNanos(System.nanoTime() - servingSince).toSeconds();
        }
    }

    Hold hold() {
        return new Hold();
    }

    private boolean serving(TransientException failure, Mark before) {
        if (failure.backendDown()) {
            return false;
        }
        if (completed.get() > before.completed()) {
            return true;
        }
        if (sawDown.get() > before.sawDown()) {
            return false;
        }
        return applier.ping();
    }
}
