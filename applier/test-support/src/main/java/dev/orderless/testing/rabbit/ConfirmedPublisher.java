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

    public static void publishAll(ConnectionFactory connectionFactory, String queue, List<byte[]> bodies)
            throws Exception {
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        template.setMandatory(true);
        List<CorrelationData> pending = new ArrayList<>();
        for (byte[] body : bodies) {
            Message message = MessageBuilder.withBody(body).setContentType("application/json").build();
            CorrelationData correlation = new CorrelationData(UUID.randomUUID().toString());
            template.send("", queue, message, correlation);
            pending.add(correlation);
        }
        for (CorrelationData correlation : pending) {
            CorrelationData.Confirm confirm = correlation.getFuture().get(30, TimeUnit.SECONDS);
            assertThat(confirm.ack()).as("broker confirmed the publish").isTrue();
            assertThat(correlation.getReturned()).as("routed to '" + queue + "'").isNull();
        }
    }
}
