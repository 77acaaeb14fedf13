package dev.orderless.publish;

import com.rabbitmq.client.AMQP;
import dev.orderless.broker.internal.AmqpEncoding;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.UncategorizedAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.connection.PublisherCallbackChannel;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;

/**
 * What a publisher must know of the connection it sends on, so that one message the client cannot encode
 * never shifts the confirms of the others: the client numbers a publish for its confirm before it encodes
 * it, so an encoding failure on the channel would leave every later confirm credited to the message before.
 *
 * <ol>
 *   <li>The frame size the broker allows, as each new connection reports it (RabbitMQ's default until one
 *       does; 0 means no limit).
 *   <li>Whether a message fits, checked before it touches the channel ({@link #unsendable}): its properties
 *       as the template will send them, with {@value #HEADROOM} bytes left for the headers the template adds
 *       after this check.
 *   <li>A failure of the client with a message it already numbered ({@link #clientSide}) makes the
 *       channels' confirms untrustworthy: the connection is reset ({@link #reset}).
 * </ol>
 */
final class PublisherConnection {
    private static final Logger log = LoggerFactory.getLogger(PublisherConnection.class);
    static final int HEADROOM = 1024;

    private final ConnectionFactory factory;
    private final MessagePropertiesConverter converter = new DefaultMessagePropertiesConverter();
    private volatile int frameMax = AmqpEncoding.DEFAULT_FRAME_MAX;

    private PublisherConnection(ConnectionFactory factory) {
        this.factory = factory;
    }

    /** Watches the publisher connections of {@code connectionFactory} (its own if it has no separate ones). */
    static PublisherConnection of(ConnectionFactory connectionFactory) {
        ConnectionFactory publishing = connectionFactory.getPublisherConnectionFactory();
        PublisherConnection connection = new PublisherConnection(publishing != null ? publishing : connectionFactory);
        connection.factory.addConnectionListener(c -> connection.frameMaxIs(c.getDelegate().getFrameMax()));
        return connection;
    }

    /** The broker's frame_max as a connection reported it; 0 means no limit. */
    void frameMaxIs(int reported) {
        frameMax = reported > 0 ? reported : Integer.MAX_VALUE - HEADROOM;
    }

    /** Why the client could not send {@code message} with {@code correlation}, if it could not. */
    Optional<String> unsendable(Message message, CorrelationData correlation) {
        MessageProperties properties = message.getMessageProperties();
        try {
            AMQP.BasicProperties encoded = converter.fromMessageProperties(properties, "UTF-8");
            Map<String, Object> headers = new HashMap<>(encoded.getHeaders() == null ? Map.of() : encoded.getHeaders());
            headers.put(PublisherCallbackChannel.RETURNED_MESSAGE_CORRELATION_KEY, correlation.getId());   // the template adds it
            return AmqpEncoding.unsendable(encoded.builder().headers(headers).build(), message.getBody().length,
                    frameMax - HEADROOM);
        } catch (RuntimeException e) {
            return Optional.of("its properties cannot be converted: " + e);
        }
    }

    /** A failure of the client with the message (it threw while encoding), not of the connection. */
    static boolean clientSide(AmqpException e) {
        Throwable cause = e.getCause();
        return e instanceof UncategorizedAmqpException
                && (cause instanceof IllegalArgumentException || cause instanceof IllegalStateException);
    }

    /** Drops every channel of the publisher connection: their confirms no longer match their messages. */
    void reset() {
        if (factory instanceof CachingConnectionFactory caching) {
            caching.resetConnection();
        } else {
            log.warn("publisher: a message failed on its channel after being numbered for its confirm, and the"
                    + " connection factory ({}) cannot be reset: later confirms on that channel may be misattributed",
                    factory.getClass().getSimpleName());
        }
    }
}
