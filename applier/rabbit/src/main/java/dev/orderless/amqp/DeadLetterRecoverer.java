package dev.orderless.amqp;

import com.rabbitmq.client.Channel;
import java.util.concurrent.CompletionStage;
import org.springframework.amqp.core.Message;

/**
 * Sends a message that can never be applied to the dead-letter queue, with its reason. The consumer acks
 * the original only when the returned stage completes normally, and hands it back (unacked, to come again)
 * if it completes exceptionally, so nothing is lost. The stage may complete later, from another thread
 * (once the broker confirmed it, or once a resource alarm cleared); the consumer goes on with the next
 * message meanwhile. Never publish on {@code consumerChannel}: a broker blocking publishers would stop
 * that channel's acks too; it is given to tell whether the original is still held.
 */
@FunctionalInterface
public interface DeadLetterRecoverer {
    /**
     * Sends {@code message} to the dead-letter queue with {@code reason}.
     *
     * @param message         the message as delivered
     * @param consumerChannel the channel it was delivered on: to tell whether the original is still held, never to
     *                        publish on
     * @param reason          why it can never be applied, short enough for a header
     * @return completes once the dead-letter queue has it (the original is then acked), exceptionally if it could not
     *         be sent (the original is handed back)
     */
    CompletionStage<Void> recover(Message message, Channel consumerChannel, String reason);
}
