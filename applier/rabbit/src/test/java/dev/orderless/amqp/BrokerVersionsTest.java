package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.broker.QueueTopology;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * What orderless relies on that changed between RabbitMQ 3.x and 4.0, pinned on the broker this run has (CI runs
 * it on both): the quorum queue's delivery limit (none by default on 3.x, 20 on 4.0; orderless declares 50), the
 * broker's own dead letters and their {@code x-death}, and re-declaring a queue with other arguments.
 */
@ExtendWith(RabbitExtension.class)
class BrokerVersionsTest {
    private ConnectionFactory cf;
    private String queue;
    private int major;

    @BeforeEach
    void setUp(ConnectionFactory cf) {
        this.cf = cf;
        assumeTrue(QueueTopology.isRabbitMq(cf), "RabbitMQ only: quorum queues and their delivery limits");
        try (Connection connection = cf.createConnection()) {
            String version = String.valueOf(connection.getDelegate().getServerProperties().get("version"));
            major = Integer.parseInt(version.split("\\.")[0]);
            System.out.println("[broker] RabbitMQ " + version);
        }
        queue = RabbitExtension.uniqueQueue("versions");
    }

    @AfterEach
    void tearDown() {
        if (queue != null) {
            RabbitAdmin admin = new RabbitAdmin(cf);
            admin.deleteQueue(queue);
            admin.deleteQueue(queue + ".dlq");
        }
    }

    /** The {@code x-delivery-count} header of the first delivery of a message, if any. */
    private Object firstDeliveryCount;

    /** Takes the one message of {@code queue} and hands it back {@code times} times; how often it came. */
    private int requeue(String name, int times) throws Exception {
        int deliveries = 0;
        try (Connection connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            for (int i = 0; i < times; i++) {
                GetResponse[] got = new GetResponse[1];
                try {
                    Awaitility.await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(10))
                            .until(() -> (got[0] = channel.basicGet(name, false)) != null);
                } catch (org.awaitility.core.ConditionTimeoutException gone) {
                    break;   // no longer in the queue: the broker dead-lettered it
                }
                if (deliveries++ == 0) {
                    var headers = got[0].getProps().getHeaders();
                    firstDeliveryCount = headers == null ? null : headers.get("x-delivery-count");
                }
                channel.basicNack(got[0].getEnvelope().getDeliveryTag(), false, true);
            }
        }
        return deliveries;
    }

    private long messagesIn(String name) {
        var info = new RabbitAdmin(cf).getQueueInfo(name);
        return info == null ? -1 : info.getMessageCount();
    }

    private void publish(String name) throws Exception {
        try (Connection connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            channel.basicPublish("", name, null, "{\"entity\":\"e\",\"seq\":1,\"op\":\"delete\"}"
                    .getBytes(StandardCharsets.UTF_8));
        }
    }

    @Test
    void a_quorum_queue_declared_without_a_delivery_limit_dead_letters_after_20_redeliveries_on_4_and_never_on_3()
            throws Exception {
        try (Connection connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            channel.queueDeclare(queue + ".dlq", true, false, false, null);
            Map<String, Object> args = new HashMap<>(Map.of("x-queue-type", "quorum", "x-dead-letter-exchange", "",
                    "x-dead-letter-routing-key", queue + ".dlq"));
            channel.queueDeclare(queue, true, false, false, args);
        }
        publish(queue);

        int deliveries = requeue(queue, 25);

        if (major >= 4) {
            assertThat(deliveries).as("the first delivery and 20 more, then the broker dead-letters it").isEqualTo(21);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> messagesIn(queue + ".dlq") == 1);
            assertThat(firstDeliveryCount).as("x-delivery-count on a first delivery").isNull();
        } else {
            assertThat(deliveries).as("no limit on 3.x: handed back as often as asked").isEqualTo(25);
            assertThat(messagesIn(queue + ".dlq")).isZero();
            assertThat(firstDeliveryCount).as("x-delivery-count on a first delivery").hasToString("0");
        }
    }

    @Test
    void orderless_declares_a_delivery_limit_of_50_on_every_version_and_its_letters_replay() throws Exception {
        QueueTopology.declare(cf, queue, queue + ".dlq");
        publish(queue);

        assertThat(requeue(queue, 60)).as("50 redeliveries, then the broker dead-letters it").isEqualTo(51);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> messagesIn(queue + ".dlq") == 1);
        try (Connection connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            GetResponse letter = channel.basicGet(queue + ".dlq", false);
            assertThat(String.valueOf(letter.getProps().getHeaders().get("x-first-death-reason")))
                    .as("the broker's reason").isEqualTo("delivery_limit");
            channel.basicNack(letter.getEnvelope().getDeliveryTag(), false, true);
        }
        DeadLetterQueue letters = DeadLetterQueue.of(cf, queue, queue + ".dlq");
        assertThat(letters.list(10)).extracting(DeadLetterQueue.Group::kind)
                .as("a letter the broker moved itself has no orderless reason").containsExactly(DeadLetterQueue.UNKNOWN_KIND);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> messagesIn(queue + ".dlq") == 1);

        DeadLetterQueue.Replay replay = letters.replay(Optional.empty(), 10, Duration.ofDays(1), Clock.systemUTC());

        assertThat(replay.replayed()).as("its age from x-death's time: %s", replay).isEqualTo(1);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> messagesIn(queue) == 1);
    }

    @Test
    void re_declaring_the_work_queue_with_another_delivery_limit_is_refused_naming_the_queue() throws Exception {
        try (Connection connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            channel.queueDeclare(queue + ".dlq", true, false, false, null);
            channel.queueDeclare(queue, true, false, false, new HashMap<>(Map.of("x-queue-type", "quorum")));
        }

        assertThatThrownBy(() -> QueueTopology.declare(cf, queue, queue + ".dlq"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("queue '" + queue + "' could not be declared")
                .hasMessageContaining("PRECONDITION_FAILED").hasMessageContaining("x-delivery-limit");
    }
}
