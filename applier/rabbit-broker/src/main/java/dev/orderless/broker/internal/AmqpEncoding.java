package dev.orderless.broker.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.impl.AMQContentHeader;
import java.io.IOException;
import java.util.Optional;

/**
 * Whether a message's properties can be sent at all, checked before they touch a channel.
 *
 * <p>Why before: the RabbitMQ client numbers a publish for its confirm first and encodes it after, so a
 * message whose properties do not encode (a short string over 255 bytes, a header value of a type AMQP
 * has no word for) fails on a channel whose confirm numbering is then one ahead of the broker's: every
 * later confirm on it is credited to the message before. And a header frame larger than the connection's
 * {@code frame_max} makes the broker close the whole connection, failing every message in flight on it.
 * Refused here, only the message at fault fails.
 */
public final class AmqpEncoding {
    /** RabbitMQ's default {@code frame_max}: the limit assumed when the connection's is not known. */
    public static final int DEFAULT_FRAME_MAX = 131_072;

    private AmqpEncoding() {
    }

    /**
     * Why {@code properties} with a body of {@code bodySize} bytes cannot be sent on a connection with
     * {@code frameMax} (0: no limit), if they cannot.
     */
    public static Optional<String> unsendable(AMQP.BasicProperties properties, long bodySize, int frameMax) {
        int size;
        try {
            size = ((AMQContentHeader) properties).toFrame(0, bodySize).size();
        } catch (IOException | RuntimeException e) {
            return Optional.of("its AMQP properties cannot be encoded: " + e.getMessage());
        }
        if (frameMax > 0 && size > frameMax) {
            return Optional.of("its AMQP properties take " + size + " bytes, more than the connection's frame_max ("
                    + frameMax + ")");
        }
        return Optional.empty();
    }
}
