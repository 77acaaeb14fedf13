package dev.orderless.console.letters;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A dead letter as the console keeps it.
 *
 * @param id           its id in the store: the same letter taken twice (a reader stopped before its ack) is one
 * @param queue        the work queue whose consumer dead-lettered it, where a replay sends it
 * @param kind         its reason's kind as the letter carries it (one of orderless's, or any other a letter says)
 * @param reason       why it was dead-lettered, as it carries it
 * @param shownReason  the reason without the entity and seq at its end, as its group shows it
 * @param entity       the entity it names, if it names one
 * @param seq          the seq it names, if it names one
 * @param deadLettered the earliest time it is known to have been dead-lettered, or when it was stored if none is known
 * @param timeKnown    whether {@code deadLettered} is a time the letter carried
 * @param stored       when the console stored it
 * @param replays      how many times it was replayed before it was dead-lettered this time
 * @param status       where it stands
 * @param resolved     when it was replayed or purged, if it was
 * @param bodyBytes    its body's length
 * @param heldIn       the queue it was moved to, body and all, because it was too large to keep here
 *                     ({@link LetterStore#MAX_BODY_BYTES}); the console cannot replay it
 */
public record StoredLetter(String id, String queue, String kind, String reason, String shownReason,
                           Optional<String> entity, OptionalLong seq, Instant deadLettered, boolean timeKnown,
                           Instant stored, long replays, LetterStatus status, Optional<Instant> resolved,
                           long bodyBytes, Optional<String> heldIn) {

    /**
     * A letter with what an operator reads on its own page.
     *
     * @param letter  the letter
     * @param body    its body (empty once purged)
     * @param edited  the body it was edited to and replayed with, if it was
     * @param headers its properties and headers as text, by name
     * @param deaths  RabbitMQ's x-death record, one line per entry
     */
    public record Full(StoredLetter letter, Optional<byte[]> body, Optional<byte[]> edited, Map<String, String> headers,
                       List<String> deaths) {
        /** Copies the collections. */
        public Full {
            headers = Map.copyOf(headers);
            deaths = List.copyOf(deaths);
        }
    }
}
