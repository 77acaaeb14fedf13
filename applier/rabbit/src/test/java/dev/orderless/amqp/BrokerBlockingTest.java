package dev.orderless.amqp;

import dev.orderless.broker.BrokerBlocking;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.impl.AMQConnection;
import com.rabbitmq.client.impl.AMQImpl;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * {@link BrokerBlocking} hears {@code connection.blocked} on whatever connection its factory has now. The word
 * is handed to the client's connection as if read from the socket ({@link AMQConnection#handleReadFrame}): the
 * same frame and the same path in the client as the broker's, without raising an alarm on a shared broker.
 */
@ExtendWith(RabbitExtension.class)
class BrokerBlockingTest {

    @Test
    void hears_the_broker_on_the_connection_it_watches(ConnectionFactory cf) throws Exception {
        ConnectionFactory publishing = cf.getPublisherConnectionFactory();
        try (BrokerBlocking blocking = BrokerBlocking.watch(publishing, new SimpleMeterRegistry(), "test")) {
            Connection connection = publishing.createConnection();
            say(connection, new AMQImpl.Connection.Blocked("low on disk"));
            assertThat(blocking.reason()).hasValue("low on disk");
            say(connection, new AMQImpl.Connection.Unblocked());
            assertThat(blocking.reason()).isEmpty();
        }
    }

    /**
     * A caching factory keeps one connection proxy and gives it a new target connection after it lost one, and
     * tells its listeners {@code onCreate} with the same proxy: the watcher must listen on the new target.
     */
    @Test
    void hears_the_broker_on_a_connection_made_again_after_one_was_lost(RabbitBackend rabbit) throws Exception {
        URI uri = rabbit.uri();
        try (TcpProxy proxy = TcpProxy.start(uri.getHost(), uri.getPort() < 0 ? 5672 : uri.getPort())) {
            CachingConnectionFactory cf = new CachingConnectionFactory(uri);
            cf.setHost("127.0.0.1");
            cf.setPort(proxy.port());
            ConnectionFactory publishing = cf.getPublisherConnectionFactory();
            try (BrokerBlocking blocking = BrokerBlocking.watch(publishing, new SimpleMeterRegistry(), "test")) {
                Connection first = publishing.createConnection();
                var lost = first.getDelegate();
                proxy.cut();
                Awaitility.await("the connection lost").atMost(Duration.ofSeconds(10)).until(() -> !lost.isOpen());
                proxy.restore();
                Connection again = publishing.createConnection();
                assertThat(again.getDelegate()).as("a new connection").isNotSameAs(lost);

                say(again, new AMQImpl.Connection.Blocked("low on disk"));
                assertThat(blocking.reason()).as("blocked, as the new connection heard").hasValue("low on disk");
            } finally {
                cf.destroy();
            }
        }
    }

    /** Hands {@code method} to the client's connection as the broker's next frame on channel 0. */
    private static void say(Connection connection, com.rabbitmq.client.impl.Method method) throws Exception {
        ((AMQConnection) connection.getDelegate()).handleReadFrame(method.toFrame(0));
    }
}
