package dev.orderless.consume.internal;

import dev.orderless.Backoff;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The consumer's pauses between retries: as long as {@link Backoff#pause(int)} says, ended at once by the
 * consumer's stop signal.
 */
public final class RetryPause {
    private final Backoff backoff;
    private final CountDownLatch stop;

    public RetryPause(Backoff backoff, CountDownLatch stop) {
        this.backoff = backoff;
        this.stop = stop;
    }

    /** Sleeps for the pause after {@code attempt} failures (1-based); false if stopping or interrupted. */
    public boolean pause(int attempt) {
        try {
            // a count that wrapped after 2^31 retries (weeks of an outage) is still very many: the longest pause
            return !stop.await(backoff.pause(attempt < 1 ? Integer.MAX_VALUE : attempt).toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * As {@link #pause(int)}, but never longer than {@code atMost} (Kafka: a held record's lock must not expire during
     * the pause).
     */
    public boolean pause(int attempt, java.time.Duration atMost) {
        java.time.Duration pause = backoff.pause(attempt < 1 ? Integer.MAX_VALUE : attempt);
        try {
            return !stop.await(Math.min(pause.toNanos(), atMost.toNanos()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public boolean stopping() {
        return stop.getCount() == 0;
    }
}
