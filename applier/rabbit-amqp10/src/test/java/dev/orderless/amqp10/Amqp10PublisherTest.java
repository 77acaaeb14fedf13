package dev.orderless.amqp10;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.amqp.Connection;
import dev.orderless.Backoff;
import dev.orderless.apply.Operation;
import dev.orderless.broker.QueueTopology;
import dev.orderless.publish.PublishFailedException;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.testing.rabbit.OnRabbitMq4;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The AMQP 1.0 publisher against a real RabbitMQ 4: what it does when its queue goes. (It comes back on the same
 * connection only in part: RabbitMQ 4.0 ends the AMQP 1.0 session on an attach to a queue that does not exist, and
 * the client 1.5 does not open another, so that connection publishes no more; the publisher fails each publish
 * with the reason, bounded, and an application opens a new connection.)
 */
@OnRabbitMq4
@ExtendWith({RabbitExtension.class, Amqp10Extension.class})
class Amqp10PublisherTest {
    private static final PublisherOptions QUICK = PublisherOptions.ofDefaults().withConfirmTimeout(Duration.ofSeconds(2))
            .withMaxAttempts(2).withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(100)));

    private static List<Operation> ops(String entity, int count) {
        List<Operation> ops = new ArrayList<>();
        for (int seq = 1; seq <= count; seq++) {
            ops.add(Operation.assign(entity, seq, "name", new BsonString("n" + seq)));
        }
        return ops;
    }

    @Test
    void a_publisher_whose_queue_was_deleted_fails_within_its_attempts_listing_every_operation(
            ConnectionFactory admin, Connection connection) {
        String queue = RabbitExtension.uniqueQueue("amqp10-publisher");
        RabbitAdmin rabbit = new RabbitAdmin(admin);
        QueueTopology.declare(admin, queue, queue + ".dlq");
        try (Amqp10Publisher publisher = Amqp10Publisher.toQueue(connection, queue, QUICK)) {
            publisher.publishAll(ops("before", 5));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> count(rabbit, queue) == 5);

            rabbit.deleteQueue(queue);   // the broker detaches the publisher's link: the client closes it
            List<Operation> lost = ops("meanwhile", 3);
            assertThatThrownBy(() -> publisher.publishAll(lost)).isInstanceOf(PublishFailedException.class)
                    .hasMessageContaining(queue)
                    .satisfies(e -> assertThat(((PublishFailedException) e).failed()).containsExactlyElementsOf(lost));

        } finally {
            rabbit.deleteQueue(queue);
            rabbit.deleteQueue(queue + ".dlq");
        }
    }

    private static long count(RabbitAdmin rabbit, String queue) {
        var info = rabbit.getQueueInfo(queue);
        return info == null ? -1 : info.getMessageCount();
    }
}
