package dev.orderless.lease;

import dev.orderless.InvalidConfigurationException;
import java.time.Clock;
import java.time.Duration;

/**
 * Lease timing. Immutable; start from {@link #ofDefaults()}.
 *
 * @param ttl        how long a lease lives without renewal; a dead owner's lease is taken over after this
 * @param renewEvery how often the holder renews (well below ttl); renewal happens only while the holder's
 *                   worker shows it is alive ({@link Lease#heartbeat()}), so a paused or hung worker loses
 *                   its lease instead of holding it for ever
 * @param clock      the clock expiry is computed with; skew between nodes costs time, never data (writes
 *                   are fenced)
 */
public record LeaseOptions(Duration ttl, Duration renewEvery, Clock clock) {
    /**
     * Checks the values.
     *
     * @param ttl        how long a lease lives without renewal; at least 100 ms
     * @param renewEvery how often the holder renews; positive and at most half of {@code ttl}
     * @param clock      the clock expiry is computed with; not null
     * @throws InvalidConfigurationException if a value is out of those bounds
     */
    public LeaseOptions {
        if (ttl == null || ttl.compareTo(Duration.ofMillis(100)) < 0) {
            throw InvalidConfigurationException.refused("lease options", "ttl", "must be at least 100 ms, was " + ttl);
        }
        if (renewEvery == null || renewEvery.isNegative() || renewEvery.isZero()
                || renewEvery.multipliedBy(2).compareTo(ttl) > 0) {
            throw InvalidConfigurationException.refused("lease options", "renewEvery", "must be positive and at most half"
                    + " of ttl (" + ttl + "), was " + renewEvery);
        }
        if (clock == null) {
            throw new InvalidConfigurationException("lease options: clock must not be null");
        }
    }

    /**
     * 10 s leases renewed every 2.5 s, on the system clock.
     *
     * @return the default options
     */
    public static LeaseOptions ofDefaults() {
        return new LeaseOptions(Duration.ofSeconds(10), Duration.ofMillis(2500), Clock.systemUTC());
    }

    /**
     * These options with another ttl and renewal period, set together since each bounds the other.
     *
     * @param ttl        how long a lease lives without renewal; at least 100 ms
     * @param renewEvery how often the holder renews; positive and at most half of {@code ttl}
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if a value is out of those bounds
     */
    public LeaseOptions withTtl(Duration ttl, Duration renewEvery) {
        return new LeaseOptions(ttl, renewEvery, clock);
    }

    /**
     * These options with another clock (a fixed or offset one in tests, say).
     *
     * @param clock the clock expiry is computed with; not null
     * @return new options; these are unchanged
     * @throws InvalidConfigurationException if {@code clock} is null
     */
    public LeaseOptions withClock(Clock clock) {
        return new LeaseOptions(ttl, renewEvery, clock);
    }
}
