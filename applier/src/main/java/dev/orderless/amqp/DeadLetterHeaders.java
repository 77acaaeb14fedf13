package dev.orderless.amqp;

import com.rabbitmq.client.AMQP;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * What a dead letter carries: the original body, properties and headers, and these headers added:
 * <ul>
 *   <li>{@value #REASON}: why, one line, at most {@value #MAX_REASON} characters (a stack trace would
 *       overflow the AMQP frame and make the republish itself fail);
 *   <li>{@value #REASON_KIND}: the reason's kind, {@code bad_input}, {@code oversized}, {@code beyond_horizon},
 *       {@code no_progress}, {@code too_large} or {@code held_too_long} (set by the consumer on the original);
 *   <li>{@value #ORIGINAL_QUEUE} and {@value #DEAD_LETTERED_AT} (the first time: a replayed letter that
 *       fails again keeps it, so replay's grace counts from its first failure);
 *   <li>{@value #REPLAY_COUNT}, once {@link DeadLetterQueue} replayed it: how many times;
 *   <li>{@value #LETTER_ID}: names this publish, so a return from the broker finds its letter;
 *   <li>Spring AMQP's {@code RepublishMessageRecoverer} headers, which Spring tooling reads:
 *       {@value #EXCEPTION_MESSAGE} (the same one-line reason), {@value #ORIGINAL_EXCHANGE} and
 *       {@value #ORIGINAL_ROUTING_KEY} (where the message was published). No stack trace header: the
 *       reason is the whole story, and a stack trace could overflow the frame.
 * </ul>
 */
final class DeadLetterHeaders {
    static final String REASON = "x-orderless-reason";
    static final String REASON_KIND = "x-orderless-reason-kind";
    static final String REPLAY_COUNT = "x-orderless-replay-count";
    static final String ORIGINAL_QUEUE = "x-orderless-original-queue";
    static final String DEAD_LETTERED_AT = "x-orderless-dead-lettered-at";
    static final String LETTER_ID = "x-orderless-dead-letter-id";
    static final String EXCEPTION_MESSAGE = "x-exception-message";
    static final String ORIGINAL_EXCHANGE = "x-original-exchange";
    static final String ORIGINAL_ROUTING_KEY = "x-original-routingKey";
    static final int MAX_REASON = 200;

    private DeadLetterHeaders() {
    }

    static AMQP.BasicProperties properties(Message message, String queue, String reason, String id) {
        MessageProperties in = message.getMessageProperties();
        Map<String, Object> headers = new HashMap<>(in.getHeaders());
        headers.put(REASON, shortReason(reason));
        headers.put(EXCEPTION_MESSAGE, shortReason(reason));
        headers.put(ORIGINAL_EXCHANGE, in.getReceivedExchange() == null ? "" : in.getReceivedExchange());
        headers.put(ORIGINAL_ROUTING_KEY, in.getReceivedRoutingKey() == null ? queue : in.getReceivedRoutingKey());
        headers.put(ORIGINAL_QUEUE, queue);
        // the first time it was dead-lettered, kept through replays: a letter's age is how long it has failed
        headers.putIfAbsent(DEAD_LETTERED_AT, Instant.now().toString());
        headers.put(LETTER_ID, id);
        return new AMQP.BasicProperties.Builder()
                .contentType(in.getContentType()).contentEncoding(in.getContentEncoding())
                .messageId(in.getMessageId()).correlationId(in.getCorrelationId()).type(in.getType())
                .deliveryMode(2).headers(headers).build();
    }

    static String shortReason(String reason) {
        String line = reason == null ? "unknown" : reason.replaceAll("[\\r\\n\\t]+", " ").strip();
        return line.length() <= MAX_REASON ? line : line.substring(0, MAX_REASON - 3) + "...";
    }
}
