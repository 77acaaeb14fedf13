package dev.orderless.outbox;

import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;

/**
 * How an {@link OutboxRelay} claims and publishes. Immutable; start from {@link #ofDefaults()}.
 *
 * @param batch         entries claimed and published together (at most the publisher's window)
 * @param claimTtl      how long a claim keeps other relays off its entries; a relay that dies holding a
 *                      claim delays those entries by at most this. Longer than a batch's publish can take
 *                      (else another relay publishes them too: harmless, a duplicate)
 * @param sweepInterval how often a relay looks for due entries without being told of new ones (the change
 *                      stream tells it at once; this catches what it missed, and released claims)
 * @param backoff       pauses while a failure lasts (broker or MongoDB down): {@code backoff.pause(n)} after
 *                      the {@code n}th failure in a row; also how long a refused entry waits before its
 *                      next try ({@code backoff.pause(n)} after its {@code n}th refusal)
 * @param parkAfter     refusals of an entry's own message (with other entries going through in between)
 *                      after which it is parked instead of tried again
 * @param owner         this relay's name in its claims and logs (host and pid by default)
 * @param meters        where published entries, failures, the backlog and its age are measured
 * @param clock         the time claims are written and compared with (relays' clocks may differ by less
 *                      than a claim ttl: a larger skew only makes duplicates)
 */
public record RelayOptions(int batch, Duration claimTtl, Duration sweepInterval, Backoff backoff,
                           int parkAfter, String owner, MeterRegistry meters, Clock clock) {
    private static final String OPTIONS = "relay options";

    public RelayOptions {
        if (batch < 1 || batch > 10_000) {
            throw InvalidConfigurationException.refused(OPTIONS, "batch", "must be between 1 and 10000, was " + batch);
        }
        positive("claimTtl", claimTtl);
        positive("sweepInterval", sweepInterval);
        if (backoff == null) {
            throw InvalidConfigurationException.refused(OPTIONS, "backoff", "must not be null");
        }
        if (parkAfter < 1 || parkAfter > 1000) {
            throw InvalidConfigurationException.refused(OPTIONS, "parkAfter", "must be between 1 and 1000, was " + parkAfter);
        }
        if (owner == null || owner.isBlank()) {
            throw InvalidConfigurationException.refused(OPTIONS, "owner", "must not be blank");
        }
        if (meters == null || clock == null) {
            throw InvalidConfigurationException.refused(OPTIONS, meters == null ? "meters" : "clock", "must not be null");
        }
    }

    private static void positive(String name, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw InvalidConfigurationException.refused(OPTIONS, name, "must be positive, was " + value);
        }
    }

    /**
     * 500 a batch, claims of 1 min, a sweep every 5 s, back-off doubling from 100 ms to 10 s with the
     * default jitter, parked after 3 refusals, named for this process.
     */
    public static RelayOptions ofDefaults() {
        return new RelayOptions(500, Duration.ofMinutes(1), Duration.ofSeconds(5),
                Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(10)), 3, ManagementFactory.getRuntimeMXBean().getName(), new SimpleMeterRegistry(),
                Clock.systemUTC());
    }

    /** A copy that claims and publishes {@code batch} entries together (1 to 10,000). */
    public RelayOptions withBatch(int batch) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }

    /** A copy whose claims keep other relays off their entries for {@code claimTtl}. */
    public RelayOptions withClaimTtl(Duration claimTtl) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }

    /** A copy that looks for due entries it was not told of once per {@code sweepInterval}. */
    public RelayOptions withSweepInterval(Duration sweepInterval) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }

    /** A copy that pauses as {@code backoff} says while a failure lasts, and between tries of a refused entry. */
    public RelayOptions withBackoff(Backoff backoff) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }

    /** A copy that parks an entry after {@code parkAfter} refusals of its own message (1 to 1,000). */
    public RelayOptions withParkAfter(int parkAfter) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }

    /** A copy named {@code owner} in its claims and logs. */
    public RelayOptions withOwner(String owner) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }

    /** A copy that measures published entries, failures, the backlog and its age in {@code meters}. */
    public RelayOptions withMeters(MeterRegistry meters) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }

    /** A copy that writes and compares claims with {@code clock}'s time. */
    public RelayOptions withClock(Clock clock) {
        return new RelayOptions(batch, claimTtl, sweepInterval, backoff, parkAfter, owner, meters, clock);
    }
}
