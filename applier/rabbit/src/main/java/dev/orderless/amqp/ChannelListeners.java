package dev.orderless.amqp;

import com.rabbitmq.client.Channel;
import dev.orderless.consume.internal.ApplyingHandler;
import dev.orderless.consume.internal.BatchApplyingHandler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareBatchMessageListener;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/** The thin adapters from Spring AMQP's container to the apply logic: each delivery a {@link ChannelDelivery}. */
final class ChannelListeners {
    private ChannelListeners() {
    }

    /** One message at a time. */
    static ChannelAwareMessageListener single(ApplyingHandler handler, DeadLetterRecoverer recoverer) {
        return new ChannelAwareMessageListener() {
            @Override
            public void onMessage(Message message, Channel channel) throws IOException {
                handler.handle(new ChannelDelivery(message, channel, recoverer));
            }
        };
    }

    /** The messages a consumer took together ({@link ConsumerOptions#batchSize()}). */
    static ChannelAwareBatchMessageListener batch(BatchApplyingHandler handler, DeadLetterRecoverer recoverer) {
        return new ChannelAwareBatchMessageListener() {
            @Override
            public void onMessageBatch(List<Message> messages, Channel channel) {
                List<ChannelDelivery> deliveries = new ArrayList<>(messages.size());
                for (Message message : messages) {
                    deliveries.add(new ChannelDelivery(message, channel, recoverer));
                }
                handler.handle(deliveries);
            }
        };
    }
}
