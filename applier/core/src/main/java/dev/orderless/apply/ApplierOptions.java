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
    /** The attempts {@link #ofDefaults()} allows one apply. */
    public static final int DEFAULT_MAX_ATTEMPTS = 64;

    /**
     * Checks the options.
     *
     * @param clock       stamps tombstones with the time they were written
     * @param maxAttempts how many guarded writes one apply may try, from 1 to 10,000
     * @param meters      where outcomes are counted
     * @throws InvalidConfigurationException if {@code clock} or {@code meters} is {@code null}, or
     *                                       {@code maxAttempts} is out of range
     */
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

    /**
     * System UTC clock, {@value #DEFAULT_MAX_ATTEMPTS} attempts, a private in-memory meter registry.
     *
     * @return the default options
     */
    public static ApplierOptions ofDefaults() {
        return new ApplierOptions(Clock.systemUTC(), DEFAULT_MAX_ATTEMPTS, new SimpleMeterRegistry());
    }

    /**
     * These options with another clock.
     *
     * @param clock stamps tombstones with the time they were written
     * @return a copy with {@code clock}
     * @throws InvalidConfigurationException if {@code clock} is {@code null}
     */
    public ApplierOptions withClock(Clock clock) {
        return new ApplierOptions(clock, maxAttempts, meters);
    }

    /**
     * These options with another bound on guarded writes per apply.
     *
     * @param maxAttempts how many guarded writes one apply may try, from 1 to 10,000
     * @return a copy with {@code maxAttempts}
     * @throws InvalidConfigurationException if {@code maxAttempts} is out of range
     */
    public ApplierOptions withMaxAttempts(int maxAttempts) {
        return new ApplierOptions(clock, maxAttempts, meters);
    }

    /**
     * These options with another meter registry.
     *
     * @param meters where outcomes are counted
     * @return a copy with {@code meters}
     * @throws InvalidConfigurationException if {@code meters} is {@code null}
     */
    public ApplierOptions withMeters(MeterRegistry meters) {
        return new ApplierOptions(clock, maxAttempts, meters);
    }
}
