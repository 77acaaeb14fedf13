package dev.orderless.consume.internal;

import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * What a dead letter carries, named once for both protocols. Over AMQP 0-9-1 the consumer republishes the letter
 * with these headers; over AMQP 1.0 the broker dead-letters the message itself, with the consumer's
 * {@link #annotation annotations} (RabbitMQ takes only {@code x-opt-} ones from a client), which an AMQP 0-9-1
 * reader of the dead-letter queue sees as headers of those names beside the broker's {@code x-death}.
 */
public final class DeadLetterFields {
    /** Why, one line, at most {@value #MAX_REASON} characters (a stack trace would overflow the AMQP frame). */
    public static final String REASON = "x-orderless-reason";
    /** The reason's kind: {@code bad_input}, {@code oversized}, {@code held_too_long}, ... */
    public static final String REASON_KIND = "x-orderless-reason-kind";
    /** The entity of the operation the letter held, where it is known ({@link LetterSubject}). */
    public static final String ENTITY = "x-orderless-entity";
    /** The seq of the operation the letter held, where it is known, as a long. */
    public static final String SEQ = "x-orderless-seq";
    /** How many times {@code DeadLetterQueue} replayed the letter. */
    public static final String REPLAY_COUNT = "x-orderless-replay-count";
    /** The queue it was dead-lettered from. */
    public static final String ORIGINAL_QUEUE = "x-orderless-original-queue";
    /** When it was first dead-lettered, kept through replays (ISO-8601). */
    public static final String DEAD_LETTERED_AT = "x-orderless-dead-lettered-at";
    /** Names one republish, so a return from the broker finds its letter (AMQP 0-9-1 only). */
    public static final String LETTER_ID = "x-orderless-dead-letter-id";
    /** Spring AMQP's {@code RepublishMessageRecoverer} headers, which Spring tooling reads (AMQP 0-9-1 only). */
    public static final String EXCEPTION_MESSAGE = "x-exception-message";
    public static final String ORIGINAL_EXCHANGE = "x-original-exchange";
    public static final String ORIGINAL_ROUTING_KEY = "x-original-routingKey";
    public static final int MAX_REASON = 200;

    private DeadLetterFields() {
    }

    /**
     * The AMQP 1.0 message annotation that carries what the header {@code header} carries:
     * {@code x-orderless-reason} is {@code x-opt-orderless-reason}.
     */
    public static String annotation(String header) {
        return "x-opt-" + header.substring("x-".length());
    }

    /**
     * When a letter was first dead-lettered: the time it already carries if that is a time and not after
     * {@code now}, else {@code now}. Trusting a header only in the direction that makes a letter older is
     * what keeps a forged or copied header from getting a letter past replay's grace.
     */
    public static Instant deadLetteredAt(Object carried, Instant now) {
        if (carried != null) {
            try {
                Instant at = Instant.parse(carried.toString());
                if (!at.isAfter(now)) {
                    return at;
                }
            } catch (DateTimeParseException e) {
                // not ours, or damaged: now is the first time orderless saw it fail
            }
        }
        return now;
    }

    /** {@code reason} on one line, at most {@value #MAX_REASON} characters. */
    public static String shortReason(String reason) {
        String line = reason == null ? "unknown" : reason.replaceAll("[\\r\\n\\t]+", " ").strip();
        return line.length() <= MAX_REASON ? line : line.substring(0, MAX_REASON - 3) + "...";
    }
}
