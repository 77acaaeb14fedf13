package dev.orderless.amqp;

import static dev.orderless.consume.internal.DeadLetterFields.DEAD_LETTERED_AT;
import static dev.orderless.consume.internal.DeadLetterFields.EXCEPTION_MESSAGE;
import static dev.orderless.consume.internal.DeadLetterFields.LETTER_ID;
import static dev.orderless.consume.internal.DeadLetterFields.MAX_REASON;
import static dev.orderless.consume.internal.DeadLetterFields.ORIGINAL_EXCHANGE;
import static dev.orderless.consume.internal.DeadLetterFields.ORIGINAL_QUEUE;
import static dev.orderless.consume.internal.DeadLetterFields.ORIGINAL_ROUTING_KEY;
import static dev.orderless.consume.internal.DeadLetterFields.REASON;
import static dev.orderless.consume.internal.DeadLetterFields.REASON_KIND;
import static dev.orderless.consume.internal.DeadLetterFields.REPLAY_COUNT;
import static dev.orderless.consume.internal.DeadLetterFields.deadLetteredAt;
import static dev.orderless.consume.internal.DeadLetterFields.shortReason;

import com.rabbitmq.client.AMQP;
import dev.orderless.broker.internal.AmqpEncoding;
import dev.orderless.consume.internal.DeadLetterFields;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * What a dead letter carries: the original body, properties and headers, and these headers added:
 * <ul>
 *   <li>{@value DeadLetterFields#REASON}: why, one line, at most {@value DeadLetterFields#MAX_REASON} characters (a stack trace would
 *       overflow the AMQP frame and make the republish itself fail);
 *   <li>{@value DeadLetterFields#REASON_KIND}: the reason's kind, {@code bad_input}, {@code oversized}, {@code beyond_horizon},
 *       {@code no_progress}, {@code too_large}, {@code held_too_long} or {@code unsupported_envelope} (set by the consumer on the original);
 *   <li>{@value DeadLetterFields#ORIGINAL_QUEUE} and {@value DeadLetterFields#DEAD_LETTERED_AT}: the first time, so that replay's grace
 *       counts from the first failure. A replayed letter that fails again keeps the time it carries, but
 *       only if that time is not in the future: a producer can set any header, and a date it set ahead
 *       must not make a letter look young ({@link #deadLetteredAt}). A date in the past only makes replay
 *       refuse the letter sooner, which loses nothing;
 *   <li>{@value DeadLetterFields#REPLAY_COUNT}, once {@link DeadLetterQueue} replayed it: how many times;
 *   <li>{@value DeadLetterFields#LETTER_ID}: names this publish, so a return from the broker finds its letter;
 *   <li>Spring AMQP's {@code RepublishMessageRecoverer} headers, which Spring tooling reads:
 *       {@value DeadLetterFields#EXCEPTION_MESSAGE} (the same one-line reason), {@value DeadLetterFields#ORIGINAL_EXCHANGE} and
 *       {@value DeadLetterFields#ORIGINAL_ROUTING_KEY} (where the message was published). No stack trace header: the
 *       reason is the whole story, and a stack trace could overflow the frame.
 * </ul>
 */
final class DeadLetterHeaders {

    private DeadLetterHeaders() {
    }

    /**
     * The properties of the letter for {@code message}, cut to what can be sent on a connection with
     * {@code frameMax} (checked before they touch a channel, see {@link AmqpEncoding}):
     * <ol>
     *   <li>the original's properties and headers, with orderless's added ({@link #properties});
     *   <li>if those cannot be sent, only orderless's headers and the letter's history
     *       ({@link #minimal} keeping it), the reason saying what was dropped;
     *   <li>if even those cannot be sent (the history was the trouble), orderless's headers alone.
     * </ol>
     * A letter that cannot be sent would come back as its original, again and again.
     */
    static AMQP.BasicProperties sendable(Message message, String queue, String reason, String id, int frameMax) {
        AMQP.BasicProperties properties = properties(message, queue, reason, id);
        Optional<String> unsendable = AmqpEncoding.unsendable(properties, message.getBody().length, frameMax);
        if (unsendable.isPresent()) {
            String why = reason + "; its original properties were dropped: " + unsendable.get();
            properties = minimal(message, queue, why, id, true);
            if (AmqpEncoding.unsendable(properties, message.getBody().length, frameMax).isPresent()) {
                properties = minimal(message, queue, why, id, false);   // the history was the trouble
            }
        }
        return properties;
    }

    static AMQP.BasicProperties properties(Message message, String queue, String reason, String id) {
        MessageProperties in = message.getMessageProperties();
        Map<String, Object> headers = ours(message, queue, reason, id, new HashMap<>(in.getHeaders()));
        return new AMQP.BasicProperties.Builder()
                .contentType(in.getContentType()).contentEncoding(in.getContentEncoding())
                .messageId(in.getMessageId()).correlationId(in.getCorrelationId()).type(in.getType())
                .deliveryMode(2).headers(headers).build();
    }

    /**
     * Only orderless's headers and the content type, for an original whose own properties cannot be sent
     * again; with what tells a letter's age and history ({@code x-death}, the replay count) if
     * {@code keepHistory}.
     */
    static AMQP.BasicProperties minimal(Message message, String queue, String reason, String id, boolean keepHistory) {
        Map<String, Object> headers = new HashMap<>();
        Map<String, Object> original = message.getMessageProperties().getHeaders();
        if (keepHistory) {
            for (String kept : new String[] {"x-death", REPLAY_COUNT}) {
                if (original.get(kept) != null) {
                    headers.put(kept, original.get(kept));
                }
            }
        }
        return new AMQP.BasicProperties.Builder().contentType(message.getMessageProperties().getContentType())
                .deliveryMode(2).headers(ours(message, queue, reason, id, headers)).build();
    }

    private static Map<String, Object> ours(Message message, String queue, String reason, String id,
                                            Map<String, Object> headers) {
        MessageProperties in = message.getMessageProperties();
        Object carriedAt = in.getHeaders().get(DEAD_LETTERED_AT);
        headers.put(REASON, shortReason(reason));
        if (in.getHeaders().get(REASON_KIND) != null) {
            headers.put(REASON_KIND, in.getHeaders().get(REASON_KIND).toString());
        }
        headers.put(EXCEPTION_MESSAGE, shortReason(reason));
        headers.put(ORIGINAL_EXCHANGE, in.getReceivedExchange() == null ? "" : in.getReceivedExchange());
        headers.put(ORIGINAL_ROUTING_KEY, in.getReceivedRoutingKey() == null ? queue : in.getReceivedRoutingKey());
        headers.put(ORIGINAL_QUEUE, queue);
        // the first time it was dead-lettered, kept through replays: a letter's age is how long it has failed
        headers.put(DEAD_LETTERED_AT, deadLetteredAt(carriedAt, Instant.now()).toString());
        headers.put(LETTER_ID, id);
        return headers;
    }
}
