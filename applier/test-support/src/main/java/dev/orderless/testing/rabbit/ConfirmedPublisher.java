package dev.orderless.testing.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/** Test-side publishing: sends raw bodies to a queue and asserts every one was confirmed and routed. */
public final class ConfirmedPublisher {
    private ConfirmedPublisher() {
    }

    /**
     * Sends {@code bodies} to {@code queue} in the order given, all on one channel, and waits for each to be confirmed
     * and routed. One channel: a caching connection factory hands consecutive sends the channels it holds idle in
     * turn, and the broker keeps the order of messages within a channel only, so sends spread over several channels
     * can reach the queue in another order (a chaos run's shrinking, which replays a history in a given order, saw
     * that).
     *
     * @param connectionFactory where to publish (with publisher confirms)
     * @param queue             the queue, through the default exchange
     * @param bodies            the message bodies, in order
     * @throws Exception if a confirm does not come within 30 s
     */
    public static void publishAll(ConnectionFactory connectionFactory, String queue, List<byte[]> bodies)
            throws Exception {
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        template.setMandatory(true);
        List<CorrelationData> pending = new ArrayList<>();
        template.invoke(onOneChannel -> {
            for (byte[] body : bodies) {
                Message message = MessageBuilder.withBody(body).setContentType("application/json").build();
                CorrelationData correlation = new CorrelationData(UUID.randomUUID().toString());
                onOneChannel.send("", queue, message, correlation);
                pending.add(correlation);
            }
            return null;
        });
        for (CorrelationData correlation : pending) {
            CorrelationData.Confirm confirm = correlation.getFuture().get(30, TimeUnit.SECONDS);
            assertThat(confirm.ack()).as("broker confirmed the publish").isTrue();
            assertThat(correlation.getReturned()).as("routed to '" + queue + "'").isNull();
        }
    }
}
