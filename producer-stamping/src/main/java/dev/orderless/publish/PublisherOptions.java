package dev.orderless.publish;

import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;

/**
 * How a {@link ConfirmingPublisher} waits and retries. Immutable; start from {@link #ofDefaults()}.
 *
 * @param confirmTimeout how long to wait for the broker's confirms of one window of messages; also how
 *                       long a publish waits for a broker that blocks publishers (resource alarm)
 *                       before it fails with {@link BrokerBlockedException}
 * @param maxAttempts    sends per message before it is reported as failed
 * @param backoff        pause before re-sending what was not confirmed: {@code backoff.pause(n)} after the
 *                       {@code n}th send of a window that the broker did not take all of
 * @param window         messages sent before waiting for their confirms (bounds memory and lets the
 *                       broker push back)
 * @param meters         where blocked time is counted ({@code orderless.amqp.blocked.seconds{role=publisher}})
 * @param observations   where each send is observed ({@code orderless.publish}, a sender: a tracing handler
 *                       puts the trace context in the message's headers, where the consumer's
 *                       {@code orderless.consume} continues it); none by default
 */
public record PublisherOptions(Duration confirmTimeout, int maxAttempts, Backoff backoff, int window,
                               MeterRegistry meters, ObservationRegistry observations) {
    private static final String OPTIONS = "publisher options";

    /**
     * Doubling from 200 ms to 2 s, with the default jitter. The first pause is at most the 200 ms re-sends
     * always waited (100 to 200 ms with the jitter); doubling instead of a fixed pause because a window the
     * broker did not take usually means a broker restarting or failing over, which a second try 200 ms
     * later rarely finds back, and the jitter keeps the publishers that failed together from re-sending
     * together. With the default 5 attempts the pauses add up to at most 3 s, small next to the confirm
     * timeout each attempt may wait.
     */
    private static final Backoff DEFAULT_BACKOFF = Backoff.of(Duration.ofMillis(200), Duration.ofSeconds(2));

    public PublisherOptions {
        if (confirmTimeout == null || confirmTimeout.isNegative() || confirmTimeout.isZero()) {
            throw InvalidConfigurationException.refused(OPTIONS, "confirmTimeout", "must be positive, was " + confirmTimeout);
        }
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw InvalidConfigurationException.refused(OPTIONS, "maxAttempts", "must be between 1 and 100, was " + maxAttempts);
        }
        if (backoff == null) {
            throw InvalidConfigurationException.refused(OPTIONS, "backoff", "must not be null");
        }
        if (window < 1 || window > 100_000) {
            throw InvalidConfigurationException.refused(OPTIONS, "window", "must be between 1 and 100000, was " + window);
        }
        if (meters == null || observations == null) {
            throw InvalidConfigurationException.refused(OPTIONS, meters == null ? "meters" : "observations", "must not be null");
        }
    }

    /**
     * 10 s for a window's confirms, 5 attempts, 1,000 in flight, a private meter registry, no observations;
     * re-sends after a back-off doubling from 200 ms to 2 s
     * (see {@code DEFAULT_BACKOFF}).
     */
    public static PublisherOptions ofDefaults() {
        return new PublisherOptions(Duration.ofSeconds(10), 5, DEFAULT_BACKOFF, 1000, new SimpleMeterRegistry(),
                ObservationRegistry.NOOP);
    }

    /** A copy that counts blocked time in {@code meters}. */
    public PublisherOptions withMeters(MeterRegistry meters) {
        return new PublisherOptions(confirmTimeout, maxAttempts, backoff, window, meters, observations);
    }

    /** A copy that observes each send in {@code observations}. */
    public PublisherOptions withObservations(ObservationRegistry observations) {
        return new PublisherOptions(confirmTimeout, maxAttempts, backoff, window, meters, observations);
    }

    /** A copy that waits up to {@code confirmTimeout} for a window's confirms (and for a blocked broker). */
    public PublisherOptions withConfirmTimeout(Duration confirmTimeout) {
        return new PublisherOptions(confirmTimeout, maxAttempts, backoff, window, meters, observations);
    }

    /** A copy that sends a message up to {@code maxAttempts} times (1 to 100) before reporting it failed. */
    public PublisherOptions withMaxAttempts(int maxAttempts) {
        return new PublisherOptions(confirmTimeout, maxAttempts, backoff, window, meters, observations);
    }

    /** A copy that pauses as {@code backoff} says before re-sending what was not confirmed. */
    public PublisherOptions withBackoff(Backoff backoff) {
        return new PublisherOptions(confirmTimeout, maxAttempts, backoff, window, meters, observations);
    }

    /** A copy that sends up to {@code window} messages (1 to 100,000) before waiting for their confirms. */
    public PublisherOptions withWindow(int window) {
        return new PublisherOptions(confirmTimeout, maxAttempts, backoff, window, meters, observations);
    }
}
