package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * What {@link QueueTopology} makes of the broker's answers about a queue: a broker that answers normally and
 * refuses is a configuration to fix (never "cannot be reached"), a queue with other arguments says so, and asking
 * leaves no channel open.
 */
@ExtendWith(RabbitExtension.class)
class QueueTopologyAnswersTest {

    @Test
    void a_queue_held_exclusively_by_another_connection_is_looked_up_as_configuration_not_as_a_broker_away(
            RabbitBackend rabbit, ConnectionFactory cf) {
        assumeTrue(rabbit.isRabbitMq(), "RabbitMQ's RESOURCE_LOCKED for another connection's exclusive queue");
        String queue = RabbitExtension.uniqueQueue("locked");
        CachingConnectionFactory other = new CachingConnectionFactory(rabbit.uri());
        try {
            new RabbitAdmin(other).declareQueue(new org.springframework.amqp.core.Queue(queue, false, true, true));

            assertThatThrownBy(() -> QueueTopology.lookup(cf, queue))
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("queue '" + queue + "'")
                    .hasMessageContaining("RESOURCE_LOCKED")
                    .hasMessageNotContaining("failing over");
        } finally {
            other.destroy();
        }
    }

    @Test
    void a_queue_held_exclusively_by_another_connection_fails_the_declaration_as_configuration(RabbitBackend rabbit,
                                                                                              ConnectionFactory cf) {
        assumeTrue(rabbit.isRabbitMq(), "RabbitMQ's RESOURCE_LOCKED for another connection's exclusive queue");
        String queue = RabbitExtension.uniqueQueue("locked");
        CachingConnectionFactory other = new CachingConnectionFactory(rabbit.uri());
        try {
            new RabbitAdmin(other).declareQueue(new org.springframework.amqp.core.Queue(queue, false, true, true));

            assertThatThrownBy(() -> QueueTopology.declare(cf, queue, RabbitExtension.uniqueQueue("locked.dlq"),
                    QueueTopology.QueueType.CLASSIC, Optional.empty()))
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("queue '" + queue + "'")
                    .hasMessageContaining("RESOURCE_LOCKED")
                    .hasMessageNotContaining("cannot be reached");
        } finally {
            other.destroy();
        }
    }

    @Test
    void a_queue_that_exists_with_other_arguments_fails_the_declaration_saying_so(RabbitBackend rabbit,
                                                                                 ConnectionFactory cf) {
        assumeTrue(rabbit.isRabbitMq(), "only RabbitMQ checks a queue's arguments on a declaration");
        String queue = RabbitExtension.uniqueQueue("args");
        String dlq = queue + ".dlq";
        QueueTopology.declare(cf, queue, dlq, QueueTopology.QueueType.CLASSIC, Optional.empty());
        try {
            assertThatThrownBy(() -> QueueTopology.declare(cf, queue, dlq, QueueTopology.QueueType.QUORUM,
                    Optional.empty()))
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("queue '" + queue + "' could not be declared with")
                    .hasMessageContaining("PRECONDITION_FAILED");
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(dlq);
        }
    }

    @Test
    void looking_up_queues_many_times_leaves_no_channel_open(RabbitBackend rabbit) {
        String queue = RabbitExtension.uniqueQueue("lookups");
        AtomicInteger open = new AtomicInteger();
        CachingConnectionFactory cf = new CachingConnectionFactory(rabbit.uri());
        cf.getRabbitConnectionFactory().setMetricsCollector(new com.rabbitmq.client.impl.AbstractMetricsCollector() {
            @Override protected void incrementConnectionCount(com.rabbitmq.client.Connection c) { }
            @Override protected void decrementConnectionCount(com.rabbitmq.client.Connection c) { }
            @Override protected void incrementChannelCount(com.rabbitmq.client.Channel c) { open.incrementAndGet(); }
            @Override protected void decrementChannelCount(com.rabbitmq.client.Channel c) { open.decrementAndGet(); }
            @Override protected void markPublishedMessage() { }
            @Override protected void markMessagePublishFailed() { }
            @Override protected void markConsumedMessage() { }
            @Override protected void markAcknowledgedMessage() { }
            @Override protected void markRejectedMessage() { }
            @Override protected void markMessagePublishAcknowledged() { }
            @Override protected void markMessagePublishNotAcknowledged() { }
            @Override protected void markPublishedMessageUnrouted() { }
        });
        cf.setChannelCacheSize(4);
        try {
            QueueTopology.declare(cf, queue, queue + ".dlq", QueueTopology.QueueType.CLASSIC, Optional.empty());
            for (int i = 0; i < 200; i++) {
                assertThat(QueueTopology.lookup(cf, queue)).isPresent();
                assertThat(QueueTopology.lookup(cf, queue + ".missing")).isEmpty();
            }
            assertThat(open.get()).as("channels open after 400 lookups (a cache of 4)").isLessThanOrEqualTo(4);
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
            cf.destroy();
        }
    }
}
