package dev.orderless.backends.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The AMQP broker chosen for this run answers, and a bad choice says what to change. */
class RabbitBackendsTest {

    @Test
    void the_chosen_broker_takes_a_confirmed_message_and_gives_it_back() throws Exception {
        try (RabbitBackend rabbit = RabbitBackends.rabbit()) {
            System.out.println("[orderless tests] AMQP broker: " + rabbit.description());
            ConnectionFactory factory = new ConnectionFactory();
            factory.setUri(rabbit.uri());
            try (Connection connection = factory.newConnection("orderless-backends-test");
                 Channel channel = connection.createChannel()) {
                // a queue of this run's own, so nothing left in a shared broker by earlier runs is seen
                String queue = "orderless.test." + UUID.randomUUID();
                channel.queueDeclare(queue, false, true, true, null);
                channel.confirmSelect();
                channel.basicPublish("", queue, null, "hello".getBytes(StandardCharsets.UTF_8));
                assertThat(channel.waitForConfirms(10_000)).isTrue();

                GetResponse got = Awaitility.await().atMost(Duration.ofSeconds(10))
                        .until(() -> channel.basicGet(queue, true), g -> g != null);
                assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("hello");
            }
        }
    }

    @Test
    void a_malformed_uri_fails_with_an_example_of_a_good_one() {
        assertThatThrownBy(() -> RabbitBackends.rabbit(Optional.of("http://localhost:5672")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must start with amqp:// or amqps://");
    }
}
