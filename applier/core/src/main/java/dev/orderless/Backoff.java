package dev.orderless;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long to pause before the next try, the one back-off every retry loop of orderless uses (the
 * consumer's transient MongoDB failures, the publisher's re-sends, the outbox relay's outages).
 *
 * <p>The pause before try {@code n + 1} (after {@code n} failures, {@code n >= 1}):
 * <ol>
 *   <li>{@code initial * 2^(n-1)}, capped at {@code max};</li>
 *   <li>then shortened by a random part of at most {@code jitter} of itself, so that many consumers that
 *       failed together do not all try again together: with {@code jitter = 0.5} the pause lies between
 *       half of it and all of it; with {@code 0}, it is exact.</li>
 * </ol>
 * A pause is never longer than {@code max}, and never shorter than {@code (1 - jitter) * initial}.
 *
 * @param initial the first pause; positive
 * @param max     the longest pause; at least {@code initial}
 * @param jitter  the share of each pause that is random, from 0 (none) to 1
 */
public record Backoff(Duration initial, Duration max, double jitter) {
    /** The share of each pause that is random unless set otherwise: between half the pause and all of it. */
    public static final double DEFAULT_JITTER = 0.5;

    /** The longest pause accepted: longer is a stop, not a back-off (and would not fit in nanoseconds). */
    public static final Duration LONGEST = Duration.ofDays(1);

    public Backoff {
        if (initial == null || initial.isZero() || initial.isNegative()) {
            throw InvalidConfigurationException.refused("backoff.initial", "must be positive, was " + initial);
        }
        if (initial.compareTo(LONGEST) > 0) {
            throw InvalidConfigurationException.refused("backoff.initial", "must be at most " + LONGEST + ", was " + initial);
        }
        if (max != null && max.compareTo(LONGEST) > 0) {
            throw InvalidConfigurationException.refused("backoff.max", "must be at most " + LONGEST + ", was " + max);
        }
        if (max == null || max.compareTo(initial) < 0) {
            throw InvalidConfigurationException.refused("backoff.max", "(" + max + ") must be at least initial (" + initial + ")");
        }
        if (!(jitter >= 0 && jitter <= 1)) {
            throw InvalidConfigurationException.refused("backoff.jitter", "must be from 0 to 1, was " + jitter);
        }
    }

    /** Doubling from {@code initial} to {@code max}, with the default jitter. */
    public static Backoff of(Duration initial, Duration max) {
        return new Backoff(initial, max, DEFAULT_JITTER);
    }

    /** The same pause every time, with no jitter. */
    public static Backoff fixed(Duration pause) {
        return new Backoff(pause, pause, 0);
    }

    public Backoff withInitial(Duration initial) {
        return new Backoff(initial, max.compareTo(initial) < 0 ? initial : max, jitter);
    }

    public Backoff withMax(Duration max) {
        return new Backoff(initial, max, jitter);
    }

    public Backoff withJitter(double jitter) {
        return new Backoff(initial, max, jitter);
    }

    /** The pause after {@code failures} failures in a row (1 for the first), with a random jitter. */
    public Duration pause(int failures) {
        return pause(failures, ThreadLocalRandom.current().nextDouble());
    }

    /**
     * The pause after {@code failures} failures in a row, with {@code random} (from 0 inclusive to 1
     * exclusive) choosing how much of the jitter to take off: 0 takes none, values near 1 take it all.
     */
    public Duration pause(int failures, double random) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1, was " + failures);
        }
        if (!(random >= 0 && random < 1)) {
            throw new IllegalArgumentException("random must be from 0 (inclusive) to 1 (exclusive), was " + random);
        }
        long initialNanos = initial.toNanos();
        long maxNanos = max.toNanos();
        int doublings = Math.min(failures - 1, 62);
        long full = initialNanos > (maxNanos >> doublings) ? maxNanos : Math.min(initialNanos << doublings, maxNanos);
        long off = (long) (full * jitter * random);
        return Duration.ofNanos(full - off);
    }
}
