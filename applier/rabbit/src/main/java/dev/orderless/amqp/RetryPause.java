package dev.orderless.amqp;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Pauses between retries: doubling from an initial pause to a maximum, with jitter so consumers do not
 * retry in lockstep. A stop signal ends every pause at once.
 */
final class Backoff {
    private final long initialNanos;
    private final long maxNanos;
    private final CountDownLatch stop;

    Backoff(Duration initial, Duration max, CountDownLatch stop) {
        this.initialNanos = initial.toNanos();
        this.maxNanos = max.toNanos();
        this.stop = stop;
    }

    /** Sleeps for the {@code attempt}-th pause (1-based); false if stopping or interrupted. */
    boolean pause(int attempt) {
        long pause = initialNanos << Math.min(attempt - 1, 20);
        pause = Math.min(pause < 0 ? maxNanos : pause, maxNanos);
        pause = pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1);
        try {
            return !stop.await(pause, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    boolean stopping() {
        return stop.getCount() == 0;
    }
}
