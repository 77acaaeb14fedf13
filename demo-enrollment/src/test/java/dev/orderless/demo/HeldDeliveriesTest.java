package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.AMQP;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What {@link HeldDeliveries} counts over AMQP 0-9-1, on a real broker: every delivery a manual-ack consumer was
 * given (prefetched or not) until it is acked, nacked, rejected, or its channel closes; basic.get too.
 */
@ExtendWith(RabbitExtension.class)
class HeldDeliveriesTest {

    @Test
    void prefetched_deliveries_are_held_until_each_is_settled_or_their_channel_closes(RabbitBackend rabbit)
            throws Exception {
        HeldDeliveries held = new HeldDeliveries();
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(rabbit.uri());
        factory.setMetricsCollector(held.amqp091());
        String queue = RabbitExtension.uniqueQueue("held");
        try (Connection connection = factory.newConnection()) {
            Channel setup = connection.createChannel();
            setup.queueDeclare(queue, false, false, false, null);
            for (int i = 0; i < 6; i++) {
                setup.basicPublish("", queue, null, new byte[] {(byte) i});
            }
            Channel consuming = connection.createChannel();
            consuming.basicQos(10);
            List<Long> tags = new CopyOnWriteArrayList<>();
            consuming.basicConsume(queue, false, new DefaultConsumer(consuming) {
                @Override
                public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
                                           byte[] body) {
                    tags.add(envelope.getDeliveryTag());   // received, handled by nobody yet
                }
            });
            Awaitility.await("six deliveries").atMost(Duration.ofSeconds(10)).until(() -> tags.size() == 6);
            assertThat(held.held()).as("six delivered, none settled").isEqualTo(6);

            consuming.basicAck(tags.get(1), true);   // the first two
            consuming.basicNack(tags.get(2), false, false);
            consuming.basicReject(tags.get(3), false);
            Awaitility.await("settled counted").atMost(Duration.ofSeconds(10)).until(() -> held.held() == 2);

            consuming.close();   // the broker takes back the two still unsettled
            assertThat(held.held()).as("a closed channel holds nothing").isZero();

            Channel getting = connection.createChannel();
            setup.basicPublish("", queue, null, new byte[] {9});
            Awaitility.await("a basic.get").atMost(Duration.ofSeconds(10))
                    .until(() -> getting.basicGet(queue, false) != null);
            assertThat(held.held()).as("a basic.get without auto-ack holds its message").isEqualTo(1);
            getting.close();
            assertThat(held.held()).isZero();
            setup.queueDelete(queue);
        }
    }
}
