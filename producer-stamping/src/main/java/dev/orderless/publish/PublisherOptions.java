package dev.orderless.publish;

import dev.orderless.InvalidConfigurationException;
import java.time.Duration;

/**
 * How a {@link ConfirmingPublisher} waits and retries. Immutable; start from {@link #ofDefaults()}.
 *
 * @param confirmTimeout how long to wait for the broker's confirm of one message
 * @param maxAttempts    sends per message before it is reported as failed
 * @param retryPause     pause before re-sending what was not confirmed
 * @param window         messages sent before waiting for their confirms (bounds memory and lets the
 *                       broker push back)
 */
public record PublisherOptions(Duration confirmTimeout, int maxAttempts, Duration retryPause, int window) {
    public PublisherOptions {
        if (confirmTimeout == null || confirmTimeout.isNegative() || confirmTimeout.isZero()) {
            throw new InvalidConfigurationException("publisher options: confirmTimeout must be positive, was " + confirmTimeout);
        }
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new InvalidConfigurationException("publisher options: maxAttempts must be between 1 and 100, was " + maxAttempts);
        }
        if (retryPause == null || retryPause.isNegative()) {
            throw new InvalidConfigurationException("publisher options: retryPause must not be negative, was " + retryPause);
        }
        if (window < 1 || window > 100_000) {
            throw new InvalidConfigurationException("publisher options: window must be between 1 and 100000, was " + window);
        }
    }

    /** 10 s per confirm, 5 attempts, 200 ms between, 1,000 in flight. */
    public static PublisherOptions ofDefaults() {
        return new PublisherOptions(Duration.ofSeconds(10), 5, Duration.ofMillis(200), 1000);
    }

    public PublisherOptions withConfirmTimeout(Duration confirmTimeout) {
        return new PublisherOptions(confirmTimeout, maxAttempts, retryPause, window);
    }

    public PublisherOptions withMaxAttempts(int maxAttempts) {
        return new PublisherOptions(confirmTimeout, maxAttempts, retryPause, window);
    }

    public PublisherOptions withRetryPause(Duration retryPause) {
        return new PublisherOptions(confirmTimeout, maxAttempts, retryPause, window);
    }

    public PublisherOptions withWindow(int window) {
        return new PublisherOptions(confirmTimeout, maxAttempts, retryPause, window);
    }
}
