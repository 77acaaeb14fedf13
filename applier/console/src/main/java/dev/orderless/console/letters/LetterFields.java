package dev.orderless.console.letters;

/** The stored letter's field names, in one place: every query and update of the letter collection names them here. */
final class LetterFields {
    static final String ID = "_id";
    /** The work queue whose consumer dead-lettered it (where a replay sends it). */
    static final String QUEUE = "queue";
    /** The dead-letter queue it was taken from. */
    static final String DEAD_LETTER_QUEUE = "deadLetterQueue";
    static final String KIND = "kind";
    /** Its reason as it carried it. */
    static final String REASON = "reason";
    /** Its reason without the entity and seq at its end, as its group shows it. */
    static final String SHOWN_REASON = "shownReason";
    /** What letters failing for one cause share (DeadLetterQueue.causeOf): the group's key. */
    static final String CAUSE = "cause";
    static final String ENTITY = "entity";
    static final String SEQ = "seq";
    /** The id orderless gave it when it dead-lettered it, if it did. */
    static final String LETTER_ID = "letterId";
    /** The earliest time it is known to have been dead-lettered; the time it was stored if none is known. */
    static final String AT = "at";
    /** Whether {@link #AT} is a time the letter carried (false: only when it was stored). */
    static final String AT_KNOWN = "atKnown";
    static final String STORED_AT = "storedAt";
    static final String REPLAYS = "replays";
    /** dead, parked, replayed or purged (LetterStatus). */
    static final String STATUS = "status";
    /** When it was replayed or purged: the retention's clock (a TTL index). */
    static final String RESOLVED_AT = "resolvedAt";
    static final String RESOLVED_BY = "resolvedBy";
    static final String BODY = "body";
    static final String BODY_BYTES = "bodyBytes";
    /** The body an operator edited it to before replaying it. */
    static final String EDITED_BODY = "editedBody";
    /** Its AMQP properties, headers included, as it arrived in the dead-letter queue. */
    static final String PROPERTIES = "properties";
    /** The queue a letter too large for the store was moved to, its body with it. */
    static final String HELD_IN = "heldIn";
    /** RabbitMQ's x-death record, one line per entry. */
    static final String DEATHS = "deaths";

    private LetterFields() {
    }
}
