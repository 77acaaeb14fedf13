package dev.orderless.outbox;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.message.Envelope;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;

/**
 * How an {@link Outbox} records. Immutable; start from {@link #ofDefaults()}.
 *
 * @param maxBacklog     entries the outbox may hold; at this many, {@code record} refuses with
 *                       {@link OutboxFullException}. A soft limit: the count is read at most once per
 *                       {@code backlogCheck} and counted up locally between reads, so several recording
 *                       processes together may pass it by what they record in one check interval
 * @param backlogCheck   how often the count of waiting entries is read from MongoDB (once per interval,
 *                       not per record)
 * @param maxMessageBytes the largest message {@code record} accepts; larger ones are refused up front.
 *                       At most the consumers' {@code maxMessageBytes} ({@link Envelope#DEFAULT_MAX_BYTES},
 *                       256 KiB, by default, as here): they would dead-letter a larger one unread
 * @param meters         where recorded and refused actions are counted
 * @param clock          the time written as an entry's first due time
 */
public record OutboxOptions(long maxBacklog, Duration backlogCheck, int maxMessageBytes, MeterRegistry meters,
                            Clock clock) {
    private static final String OPTIONS = "outbox options";

    public OutboxOptions {
        if (maxBacklog < 1) {
            throw InvalidConfigurationException.refused(OPTIONS, "maxBacklog", "must be at least 1, was " + maxBacklog);
        }
        if (backlogCheck == null || backlogCheck.isNegative() || backlogCheck.isZero()) {
            throw InvalidConfigurationException.refused(OPTIONS, "backlogCheck", "must be positive, was " + backlogCheck);
        }
        if (maxMessageBytes < 64 || maxMessageBytes > 64 * 1024 * 1024) {
            throw InvalidConfigurationException.refused(OPTIONS, "maxMessageBytes", "must be between 64 and 67108864, was "
                    + maxMessageBytes);
        }
        if (meters == null || clock == null) {
            throw InvalidConfigurationException.refused(OPTIONS, meters == null ? "meters" : "clock", "must not be null");
        }
    }

    /**
     * At most 1,000,000 waiting entries, counted once a second; messages up to the consumers' default limit;
     * a private meter registry; the system clock.
     */
    public static OutboxOptions ofDefaults() {
        return new OutboxOptions(1_000_000, Duration.ofSeconds(1), Envelope.DEFAULT_MAX_BYTES,
                new SimpleMeterRegistry(), Clock.systemUTC());
    }

    /** A copy that refuses messages larger than {@code maxMessageBytes} (64 B to 64 MiB) up front. */
    public OutboxOptions withMaxMessageBytes(int maxMessageBytes) {
        return new OutboxOptions(maxBacklog, backlogCheck, maxMessageBytes, meters, clock);
    }

    /** A copy that refuses to record once {@code maxBacklog} entries (at least 1) wait. */
    public OutboxOptions withMaxBacklog(long maxBacklog) {
        return new OutboxOptions(maxBacklog, backlogCheck, maxMessageBytes, meters, clock);
    }

    /** A copy that reads the count of waiting entries from MongoDB once per {@code backlogCheck}. */
    public OutboxOptions withBacklogCheck(Duration backlogCheck) {
        return new OutboxOptions(maxBacklog, backlogCheck, maxMessageBytes, meters, clock);
    }

    /** A copy that counts recorded and refused actions in {@code meters}. */
    public OutboxOptions withMeters(MeterRegistry meters) {
        return new OutboxOptions(maxBacklog, backlogCheck, maxMessageBytes, meters, clock);
    }

    /** A copy that writes {@code clock}'s time as an entry's first due time. */
    public OutboxOptions withClock(Clock clock) {
        return new OutboxOptions(maxBacklog, backlogCheck, maxMessageBytes, meters, clock);
    }
}
