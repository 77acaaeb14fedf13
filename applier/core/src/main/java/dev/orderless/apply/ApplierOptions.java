package dev.orderless.apply;

import dev.orderless.InvalidConfigurationException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;

/**
 * How a {@link GuardedApplier} behaves beyond the schema. Immutable; start from {@link #ofDefaults()}
 * and change with the {@code withX} copies.
 *
 * @param clock       stamps tombstones with the time they were written (compaction's grace period)
 * @param maxAttempts how many guarded writes one apply may try before giving up with a
 *                    {@link dev.orderless.TransientException}; every lost race means another operation
 *                    succeeded, so this bounds contention on one document, not correctness
 * @param meters      where outcomes are counted ({@code orderless.apply.outcomes}, tag {@code outcome})
 */
public record ApplierOptions(Clock clock, int maxAttempts, MeterRegistry meters) {
    public static final int DEFAULT_MAX_ATTEMPTS = 64;

    public ApplierOptions {
        if (clock == null) {
            throw new InvalidConfigurationException("applier options: clock must not be null");
        }
        if (maxAttempts < 1 || maxAttempts > 10_000) {
            throw new InvalidConfigurationException(
                    "applier options: maxAttempts must be between 1 and 10000, was " + maxAttempts);
        }
        if (meters == null) {
            throw new InvalidConfigurationException("applier options: meters must not be null");
        }
    }

    /** System UTC clock, {@value #DEFAULT_MAX_ATTEMPTS} attempts, a private in-memory meter registry. */
    public static ApplierOptions ofDefaults() {
        return new ApplierOptions(Clock.systemUTC(), DEFAULT_MAX_ATTEMPTS, new SimpleMeterRegistry());
    }

    public ApplierOptions withClock(Clock clock) {
        return new ApplierOptions(clock, maxAttempts, meters);
    }

    public ApplierOptions withMaxAttempts(int maxAttempts) {
        return new ApplierOptions(clock, maxAttempts, meters);
    }

    public ApplierOptions withMeters(MeterRegistry meters) {
        return new ApplierOptions(clock, maxAttempts, meters);
    }
}
