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

    /**
     * Checks the values.
     *
     * @param initial the first pause; positive
     * @param max     the longest pause; at least {@code initial}
     * @param jitter  the share of each pause that is random, from 0 (none) to 1
     * @throws InvalidConfigurationException if {@code initial} is not positive, {@code max} is shorter than
     *         {@code initial}, either is longer than {@link #LONGEST}, or {@code jitter} is not from 0 to 1
     */
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

    /**
     * Doubling from {@code initial} to {@code max}, with the default jitter.
     *
     * @param initial the first pause; positive
     * @param max     the longest pause; at least {@code initial}
     * @return the back-off
     * @throws InvalidConfigurationException if the durations are refused (see {@link Backoff})
     */
    public static Backoff of(Duration initial, Duration max) {
        return new Backoff(initial, max, DEFAULT_JITTER);
    }

    /**
     * The same pause every time, with no jitter.
     *
     * @param pause every pause; positive
     * @return the back-off
     * @throws InvalidConfigurationException if {@code pause} is refused (see {@link Backoff})
     */
    public static Backoff fixed(Duration pause) {
        return new Backoff(pause, pause, 0);
    }

    /**
     * This back-off with another first pause; {@code max} is raised to it if it was shorter.
     *
     * @param initial the first pause; positive
     * @return a new back-off; this one is unchanged
     * @throws InvalidConfigurationException if {@code initial} is refused (see {@link Backoff})
     */
    public Backoff withInitial(Duration initial) {
        // a null initial is refused by the constructor, naming it, not by the comparison
        return new Backoff(initial, initial == null || max.compareTo(initial) >= 0 ? max : initial, jitter);
    }

    /**
     * This back-off with another longest pause.
     *
     * @param max the longest pause; at least {@link #initial()}
     * @return a new back-off; this one is unchanged
     * @throws InvalidConfigurationException if {@code max} is refused (see {@link Backoff})
     */
    public Backoff withMax(Duration max) {
        return new Backoff(initial, max, jitter);
    }

    /**
     * This back-off with another random share of each pause.
     *
     * @param jitter from 0 (exact pauses) to 1
     * @return a new back-off; this one is unchanged
     * @throws InvalidConfigurationException if {@code jitter} is not from 0 to 1
     */
    public Backoff withJitter(double jitter) {
        return new Backoff(initial, max, jitter);
    }

    /**
     * The pause after {@code failures} failures in a row (1 for the first), with a random jitter.
     * Thread-safe: the random part comes from the calling thread's {@link ThreadLocalRandom}.
     *
     * @param failures how many tries failed in a row; at least 1
     * @return the pause, from {@code (1 - jitter)} of the full pause to all of it, never longer than {@code max}
     * @throws IllegalArgumentException if {@code failures} is less than 1
     */
    public Duration pause(int failures) {
        return pause(failures, ThreadLocalRandom.current().nextDouble());
    }

    /**
     * The pause after {@code failures} failures in a row, with {@code random} (from 0 inclusive to 1
     * exclusive) choosing how much of the jitter to take off: 0 takes none, values near 1 take it all.
     * The same arguments always give the same pause.
     *
     * @param failures how many tries failed in a row; at least 1
     * @param random   from 0 (inclusive) to 1 (exclusive)
     * @return the full pause {@code min(initial * 2^(failures-1), max)}, less {@code jitter * random} of it
     * @throws IllegalArgumentException if {@code failures} is less than 1 or {@code random} is out of range
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
