package dev.orderless.boot.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;

/** The Boot bean's AMQP 1.0 starter while the broker does not answer: one line each time, and no thread left behind. */
@ExtendWith(MongoExtension.class)
class Amqp10TransportTest {
    private static final String CLIENT_THREADS = "rabbitmq-amqp-environment-";

    @Test
    void attempts_against_a_broker_that_does_not_answer_share_one_environment_which_closes_with_the_starter(
            MongoDatabase db) throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();   // free, and closed again: nothing answers there
        }
        int closedPort = port;
        long before = clientThreads();
        ConsumerStarter starter = Amqp10Transport.starter(() -> List.of(new RabbitConnectionDetails.Address(
                        "127.0.0.1", closedPort)), GuardedApplier.create(db.getCollection("e", BsonDocument.class),
                        Histories.SCHEMA), ConsumerOptions.ofDefaults("amqp10-transport"), new SimpleMeterRegistry(),
                ObservationRegistry.NOOP, Optional.empty(), new dev.orderless.message.Envelope(),
                new org.springframework.beans.factory.support.DefaultListableBeanFactory());
        try {
            assertThatThrownBy(starter::start).isInstanceOf(AmqpConnectException.class)
                    .hasMessageContaining("AMQP 1.0 connection to 127.0.0.1:" + closedPort)
                    .hasMessageContaining("virtual host '/'");
            for (int attempt = 0; attempt < 3; attempt++) {
                assertThatThrownBy(starter::start).isInstanceOf(AmqpConnectException.class);
            }
            assertThat(environments()).as("the environments whose threads run after four attempts").hasSize(1);
        } finally {
            starter.close();
        }
        Awaitility.await("the environment's threads end with the starter").atMost(Duration.ofSeconds(10))
                .until(() -> clientThreads() <= before);
    }

    /** The client names its threads rabbitmq-amqp-environment-{environment}-{pool}-{n}. */
    private static java.util.Set<String> environments() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(CLIENT_THREADS))
                .map(t -> t.getName().substring(CLIENT_THREADS.length()).split("-")[0])
                .collect(java.util.stream.Collectors.toSet());
    }

    private static long clientThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(CLIENT_THREADS)).count();
    }
}
