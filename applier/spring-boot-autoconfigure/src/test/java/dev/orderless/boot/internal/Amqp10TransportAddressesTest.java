package dev.orderless.boot.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.OnRabbitMq4;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.net.ServerSocket;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;

/** The Boot bean's AMQP 1.0 consumer on a cluster's addresses (RabbitMQ 4): it uses every one, not the first. */
@OnRabbitMq4
@ExtendWith(MongoExtension.class)
class Amqp10TransportAddressesTest {

    /**
     * A cluster's addresses all serve: with the first node down, every start connects to another, whichever address
     * its turn begins at (the client alone picks one at random and does not try another when it is down).
     */
    @Test
    void with_the_first_address_down_the_consumer_connects_to_another(MongoDatabase db) throws Exception {
        java.net.URI live = dev.orderless.backends.rabbit.RabbitBackends.rabbitMq4().orElseThrow();
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        int down = closedPort;
        String queue = "amqp10-transport-addresses-" + System.nanoTime();
        org.springframework.amqp.rabbit.connection.CachingConnectionFactory cf =
                new org.springframework.amqp.rabbit.connection.CachingConnectionFactory(live);
        try {
            dev.orderless.broker.QueueTopology.declare(cf, queue, queue + ".dlq",
                    dev.orderless.broker.QueueTopology.QueueType.QUORUM);
            for (int start = 0; start < 3; start++) {
                ConsumerStarter starter = Amqp10Transport.starter(new RabbitConnectionDetails() {
                    @Override
                    public List<Address> getAddresses() {
                        return List.of(new Address("127.0.0.1", down), new Address(live.getHost(), live.getPort()));
                    }
                }, GuardedApplier.create(db.getCollection("e", BsonDocument.class), Histories.SCHEMA),
                        ConsumerOptions.ofDefaults(queue), new SimpleMeterRegistry(), ObservationRegistry.NOOP,
                        Optional.empty(), new dev.orderless.message.Envelope(),
                        new org.springframework.beans.factory.support.DefaultListableBeanFactory());
                try {
                    RunningConsumer consumer = starter.start();
                    assertThat(consumer.isRunning()).as("start " + start).isTrue();
                    consumer.close();
                } finally {
                    starter.close();
                }
            }
        } finally {
            new org.springframework.amqp.rabbit.core.RabbitAdmin(cf).deleteQueue(queue);
            new org.springframework.amqp.rabbit.core.RabbitAdmin(cf).deleteQueue(queue + ".dlq");
            cf.destroy();
        }
    }

}
