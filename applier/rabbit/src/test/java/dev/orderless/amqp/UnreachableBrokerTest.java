package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.TransientException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.broker.QueueTopology;
import dev.orderless.testing.MongoExtension;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * A consumer built from the library against a broker that is not there fails in one line that names the address,
 * the virtual host and what to check, not with Spring's bare {@code AmqpConnectException: Connection refused}.
 */
@ExtendWith(MongoExtension.class)
class UnreachableBrokerTest {
    private CachingConnectionFactory nowhere;

    @BeforeEach
    void aPortNothingListensOn() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();   // free now, and closed: nothing listens on it
        }
        nowhere = new CachingConnectionFactory("127.0.0.1", port);
        nowhere.setVirtualHost("orders");
    }

    @AfterEach
    void close() {
        nowhere.destroy();
    }

    @Test
    void declaring_the_queues_names_the_address_the_virtual_host_and_what_to_check() {
        assertThatThrownBy(() -> QueueTopology.declare(nowhere, "orders", "orders.dlq"))
                .isInstanceOf(TransientException.class)
                .hasMessageStartingWith("RabbitMQ at 127.0.0.1:" + nowhere.getPort() + " (virtual host 'orders') cannot be"
                        + " reached (Connection refused)")
                .hasMessageContaining("check that it is running, and the connection factory's host, port and virtual host");
    }

    @Test
    void a_factory_given_its_addresses_is_named_by_them_not_by_its_default_host() {
        CachingConnectionFactory byAddresses = new CachingConnectionFactory();
        byAddresses.setAddresses("127.0.0.1:" + nowhere.getPort());
        byAddresses.setVirtualHost("orders");
        try {
            assertThatThrownBy(() -> QueueTopology.declare(byAddresses, "orders", "orders.dlq"))
                    .isInstanceOf(TransientException.class)
                    .hasMessageStartingWith("RabbitMQ at 127.0.0.1:" + nowhere.getPort() + " (virtual host 'orders')");
        } finally {
            byAddresses.destroy();
        }
    }

    @Test
    void starting_a_consumer_names_the_address_the_virtual_host_and_the_queue(MongoDatabase db) {
        GuardedApplier applier = GuardedApplier.create(db.getCollection("orders", BsonDocument.class),
                CollectionSchema.builder().register("status").build());

        assertThatThrownBy(() -> OperationConsumer.builder(nowhere, applier).options(ConsumerOptions.ofDefaults("orders")).start())
                .isInstanceOf(TransientException.class)
                .hasMessageStartingWith("RabbitMQ at 127.0.0.1:" + nowhere.getPort() + " (virtual host 'orders')")
                .hasMessageContaining("looking for queue 'orders'");
    }
}
