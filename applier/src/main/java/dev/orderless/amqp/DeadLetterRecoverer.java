package dev.orderless.amqp;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import org.springframework.amqp.core.Message;

/**
 * Sends a message that can never be applied to the dead-letter queue, with its reason. Called before the
 * original is acked: if this throws, the original is not acked and comes back later, so nothing is lost.
 */
@FunctionalInterface
public interface DeadLetterRecoverer {
    void recover(Message message, Channel channel, String reason) throws IOException;
}
