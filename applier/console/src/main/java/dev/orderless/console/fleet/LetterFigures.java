package dev.orderless.console.fleet;

import java.time.Instant;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The stored dead-letter figures the backlog and the banner show, as the console's letter store
 * ({@link dev.orderless.console.letters.LetterStore}, docs/decisions/0009) counts them. Every method has a default
 * that knows nothing ({@link #none()}: the backlog's {@code letters} and {@code parked} are null, and the banner says
 * nothing of letters arriving or of their ingestion waiting).
 */
public interface LetterFigures {
    /**
     * @param queue a work queue
     * @return how many of its letters are stored with status dead, if the store knows
     */
    default OptionalLong dead(String queue) {
        return OptionalLong.empty();
    }

    /**
     * @param queue a work queue
     * @return how many of its letters are stored parked, if the store knows
     */
    default OptionalLong parked(String queue) {
        return OptionalLong.empty();
    }

    /**
     * @param since the start of the window (the banner's: five minutes ago)
     * @return per work queue, how many letters were dead-lettered since then (queues with none may be left out)
     */
    default Map<String, Long> arrivedSince(Instant since) {
        return Map.of();
    }

    /** @return per work queue, what the ingestion of its dead-letter queue waits for, while it waits */
    default Map<String, String> ingestionWaiting() {
        return Map.of();
    }

    /** @return figures that know nothing: no letter store */
    static LetterFigures none() {
        return new LetterFigures() {
        };
    }
}
