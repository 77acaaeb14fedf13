package dev.orderless.amqp;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * Dead-letters by republishing to the dead-letter queue on the consumer's own channel, in confirm mode,
 * and waiting for the broker's confirm. Works on any AMQP 0-9-1 broker. The original body, properties
 * and headers are kept; these headers are added:
 * <ul>
 *   <li>{@value #REASON}: why, one line, at most {@value #MAX_REASON} characters (a stack trace would
 *       overflow the AMQP frame and make the republish itself fail);
 *   <li>{@value #ORIGINAL_QUEUE} and {@value #DEAD_LETTERED_AT}.
 * </ul>
 */
final class RepublishingRecoverer implements DeadLetterRecoverer {
    static final String REASON = "x-orderless-reason";
    static final String ORIGINAL_QUEUE = "x-orderless-original-queue";
    static final String DEAD_LETTERED_AT = "x-orderless-dead-lettered-at";
    static final int MAX_REASON = 200;

    private final String queue;
    private final String deadLetterQueue;
    private final long confirmTimeoutMillis;

    RepublishingRecoverer(String queue, String deadLetterQueue, long confirmTimeoutMillis) {
        this.queue = queue;
        this.deadLetterQueue = deadLetterQueue;
        this.confirmTimeoutMillis = confirmTimeoutMillis;
    }

    @Override
    public void recover(Message message, Channel channel, String reason) throws IOException {
        MessageProperties in = message.getMessageProperties();
        Map<String, Object> headers = new HashMap<>(in.getHeaders());
        headers.put(REASON, shortReason(reason));
        headers.put(ORIGINAL_QUEUE, queue);
        headers.put(DEAD_LETTERED_AT, Instant.now().toString());
        AMQP.BasicProperties out = new AMQP.BasicProperties.Builder()
                .contentType(in.getContentType())
                .contentEncoding(in.getContentEncoding())
                .messageId(in.getMessageId())
                .correlationId(in.getCorrelationId())
                .type(in.getType())
                .deliveryMode(2)
                .headers(headers)
                .build();
        channel.confirmSelect();
        // the dead-letter queue is checked to exist when the consumer starts
        channel.basicPublish("", deadLetterQueue, false, out, message.getBody());
        try {
            channel.waitForConfirmsOrDie(confirmTimeoutMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for the dead-letter confirm", e);
        } catch (TimeoutException e) {
            throw new IOException("no confirm for the dead-letter publish within " + confirmTimeoutMillis + " ms", e);
        }
    }

    static String shortReason(String reason) {
        String line = reason == null ? "unknown" : reason.replaceAll("[\\r\\n\\t]+", " ").strip();
        return line.length() <= MAX_REASON ? line : line.substring(0, MAX_REASON - 3) + "...";
    }
}
