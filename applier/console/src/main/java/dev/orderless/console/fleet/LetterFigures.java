package dev.orderless.console.fleet;

import java.time.Instant;
import java.util.Map;
import java.util.OptionalLong;

/**
 * SEAM for the console's letter store (issue 52, docs/decisions/0009): the stored dead-letter figures the backlog and
 * the banner show. Until the store exists the console uses {@link #none()}: the backlog's {@code letters} and
 * {@code parked} are null and the banner says nothing of letters arriving or of ingestion waiting. The letter store
 * declares a bean of this type to fill them; every method has a default that knows nothing.
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
