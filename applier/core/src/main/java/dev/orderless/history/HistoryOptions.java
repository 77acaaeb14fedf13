package dev.orderless.history;

import dev.orderless.InvalidConfigurationException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;

/**
 * How a {@link History} behaves. Immutable; start from {@link #ofDefaults()} and change with the
 * {@code withX} copies.
 *
 * @param clock       stamps each record with the time it was recorded (retention's age)
 * @param meters      where records are counted ({@code orderless.history.recorded}, tag {@code outcome})
 * @param rebuildBatch operations a rebuild applies together, with one {@code applyAll}
 */
public record HistoryOptions(Clock clock, MeterRegistry meters, int rebuildBatch) {
    private static final String OPTIONS = "history options";

    /**
     * Checks the options.
     *
     * @param clock        stamps each record with the time it was recorded
     * @param meters       where records are counted
     * @param rebuildBatch operations a rebuild applies together, 1 to 10000
     * @throws InvalidConfigurationException if {@code clock} or {@code meters} is null, or {@code rebuildBatch} is
     *                                       out of range
     */
    public HistoryOptions {
        if (clock == null) {
            throw InvalidConfigurationException.refused(OPTIONS, "clock", "must not be null");
        }
        if (meters == null) {
            throw InvalidConfigurationException.refused(OPTIONS, "meters", "must not be null");
        }
        if (rebuildBatch < 1 || rebuildBatch > 10_000) {
            throw InvalidConfigurationException.refused(OPTIONS, "rebuildBatch", "must be between 1 and 10000, was "
                    + rebuildBatch);
        }
    }

    /**
     * The system UTC clock, a private in-memory meter registry, rebuilds in batches of 500.
     *
     * @return the default options
     */
    public static HistoryOptions ofDefaults() {
        return new HistoryOptions(Clock.systemUTC(), new SimpleMeterRegistry(), 500);
    }

    /**
     * These options with another clock.
     *
     * @param clock stamps each record with the time it was recorded
     * @return a copy; this is unchanged
     * @throws InvalidConfigurationException if {@code clock} is null
     */
    public HistoryOptions withClock(Clock clock) {
        return new HistoryOptions(clock, meters, rebuildBatch);
    }

    /**
     * These options with another meter registry.
     *
     * @param meters where records are counted
     * @return a copy; this is unchanged
     * @throws InvalidConfigurationException if {@code meters} is null
     */
    public HistoryOptions withMeters(MeterRegistry meters) {
        return new HistoryOptions(clock, meters, rebuildBatch);
    }

    /**
     * These options with another rebuild batch size.
     *
     * @param rebuildBatch operations a rebuild applies together, 1 to 10000
     * @return a copy; this is unchanged
     * @throws InvalidConfigurationException if {@code rebuildBatch} is out of range
     */
    public HistoryOptions withRebuildBatch(int rebuildBatch) {
        return new HistoryOptions(clock, meters, rebuildBatch);
    }
}
