package dev.orderless.console.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.console.ConsoleSources;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The backlog's unacknowledged count, from RabbitMQ's own management API ({@code RABBITMQ_MANAGEMENT_URL}, which
 * {@code .ci/run} enables on the test broker): AMQP tells ready messages and consumers, not what consumers hold.
 * Skipped where no management API is named, except in CI, where it fails.
 */
@ExtendWith(RabbitExtension.class)
class ManagementBacklogTest {
    /** The management API of the broker RABBITMQ_URI names (without it, the tests' broker is an embedded one). */
    private static final String MANAGEMENT = System.getenv("RABBITMQ_URI") == null ? null
            : System.getenv("RABBITMQ_MANAGEMENT_URL");

    @Test
    void a_queue_whose_consumer_holds_three_of_five_messages_shows_three_unacked_two_ready_and_one_consumer(
            ConnectionFactory rabbit) throws Exception {
        if (MANAGEMENT == null && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("CI names RabbitMQ's management API in RABBITMQ_MANAGEMENT_URL (.ci/run"
                    + " enables it); it is missing");
        }
        assumeTrue(MANAGEMENT != null, "no RABBITMQ_MANAGEMENT_URL (rabbitmq-plugins enable rabbitmq_management)");
        String work = RabbitExtension.uniqueQueue("backlog");
        RabbitAdmin admin = new RabbitAdmin(rabbit);
        admin.declareQueue(QueueBuilder.durable(work).build());
        admin.declareQueue(QueueBuilder.durable(work + ".dlq").build());
        DeadLetterQueue letters = DeadLetterQueue.of(rabbit, work, work + ".dlq");
        ConsoleSources.Consumer consumer = new ConsoleSources.Consumer(work, () -> true, () -> 0, Optional::empty,
                letters);
        try (Backlog backlog = new Backlog(List.of(consumer), Optional.of(URI.create(MANAGEMENT)), "guest", "guest");
             Connection connection = rabbit.createConnection();
             Channel holding = connection.getDelegate().createChannel()) {
            for (int i = 0; i < 5; i++) {
                holding.basicPublish("", work, null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            holding.basicQos(3);
            holding.basicConsume(work, false, new DefaultConsumer(holding));   // takes three, acks none

            // the management API samples queues every few seconds: wait for the figures, bounded
            Map<String, Object> row = Awaitility.await("the management API's count of held messages")
                    .atMost(Duration.ofSeconds(60)).until(() -> backlog.queues(LetterFigures.none()).get(0),
                            r -> Long.valueOf(3).equals(number(r.get("unacked"))));

            assertThat(row).doesNotContainKey("unackedError").doesNotContainKey("error");
            assertThat(number(row.get("ready"))).isEqualTo(2L);
            assertThat(number(row.get("consumers"))).isEqualTo(1L);
        } finally {
            admin.deleteQueue(work);
            admin.deleteQueue(work + ".dlq");
        }
    }

    @Test
    void wrong_credentials_leave_the_count_unknown_and_say_what_to_check(ConnectionFactory rabbit) {
        assumeTrue(MANAGEMENT != null, "no RABBITMQ_MANAGEMENT_URL");
        String work = RabbitExtension.uniqueQueue("backlog");
        RabbitAdmin admin = new RabbitAdmin(rabbit);
        admin.declareQueue(QueueBuilder.durable(work).build());
        admin.declareQueue(QueueBuilder.durable(work + ".dlq").build());
        ConsoleSources.Consumer consumer = new ConsoleSources.Consumer(work, () -> true, () -> 0, Optional::empty,
                DeadLetterQueue.of(rabbit, work, work + ".dlq"));
        try (Backlog backlog = new Backlog(List.of(consumer), Optional.of(URI.create(MANAGEMENT)), "guest",
                "not-the-password")) {
            Map<String, Object> row = backlog.queues(LetterFigures.none()).get(0);

            assertThat(row.get("unacked")).isNull();
            assertThat(String.valueOf(row.get("unackedError"))).contains("answered 401")
                    .contains("check spring.rabbitmq.username and password");
        } finally {
            admin.deleteQueue(work);
            admin.deleteQueue(work + ".dlq");
        }
    }

    private static Long number(Object value) {
        return value instanceof Number n ? n.longValue() : null;
    }
}
