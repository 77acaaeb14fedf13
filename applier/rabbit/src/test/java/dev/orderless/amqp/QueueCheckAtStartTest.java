package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.URI;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The consumer's start-up check of its queues says "does not exist" only when the broker says so. A broker that
 * drops the connection as it is asked (as one that is stopping or failing over does) leaves it unknown: the start
 * fails as transient, naming the queue, and succeeds once the broker answers. The drop is forced: the proxy between
 * consumer and broker closes the connection the moment the client sends the queue's name, whatever the timing.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class QueueCheckAtStartTest {

    @Test
    void a_connection_dropped_while_the_queue_is_looked_up_is_transient_and_never_read_as_a_missing_queue(
            RabbitBackend rabbit, ConnectionFactory direct, MongoDatabase db) {
        String queue = RabbitExtension.uniqueQueue("check");
        QueueTopology.declare(direct, queue, queue + ".dlq");
        URI uri = rabbit.uri();
        GuardedApplier applier = GuardedApplier.create(db.getCollection("e", BsonDocument.class), Histories.SCHEMA);
        try (TcpProxy proxy = TcpProxy.start(uri.getHost(), uri.getPort() < 0 ? 5672 : uri.getPort())) {
            CachingConnectionFactory cf = new CachingConnectionFactory(uri);
            cf.setHost("127.0.0.1");
            cf.setPort(proxy.port());
            try {
                proxy.dropWhenClientSends(queue);

                assertThatThrownBy(() -> OperationConsumer.builder(cf, applier)
                        .options(ConsumerOptions.ofDefaults(queue)).start())
                        .isInstanceOf(TransientException.class)
                        .hasMessageContaining("queue '" + queue + "'")
                        .hasMessageContaining("whether the queue exists is not known yet")
                        .hasMessageNotContaining("does not exist");

                proxy.dropWhenClientSends("");
                try (OperationConsumer consumer = OperationConsumer.builder(cf, applier)
                        .options(ConsumerOptions.ofDefaults(queue)).start()) {
                    assertThat(consumer.isRunning()).as("started once the broker answers").isTrue();
                }
            } finally {
                cf.destroy();
                new RabbitAdmin(direct).deleteQueue(queue);
                new RabbitAdmin(direct).deleteQueue(queue + ".dlq");
            }
        }
    }

    @Test
    void a_broker_that_answers_that_the_queue_is_missing_fails_the_start_with_how_to_declare_it(ConnectionFactory cf,
                                                                                              MongoDatabase db) {
        String queue = RabbitExtension.uniqueQueue("missing");
        GuardedApplier applier = GuardedApplier.create(db.getCollection("e", BsonDocument.class), Histories.SCHEMA);

        assertThat(QueueTopology.lookup(cf, queue)).as("looked up").isEmpty();
        assertThatThrownBy(() -> OperationConsumer.builder(cf, applier).options(ConsumerOptions.ofDefaults(queue)).start())
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("queue '" + queue + "' does not exist; declare it");
    }

    @Test
    void a_queue_that_exists_is_found_with_its_ready_messages(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("found");
        QueueTopology.declare(cf, queue, queue + ".dlq");
        try {
            new org.springframework.amqp.rabbit.core.RabbitTemplate(cf).convertAndSend("", queue, "one");

            // a publish without confirms reaches the queue in its own time: wait for it, bounded
            org.awaitility.Awaitility.await("the message counted").atMost(java.time.Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(QueueTopology.lookup(cf, queue)).hasValueSatisfying(info -> {
                        assertThat(info.getName()).isEqualTo(queue);
                        assertThat(info.getMessageCount()).isEqualTo(1);
                    }));
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }
}
