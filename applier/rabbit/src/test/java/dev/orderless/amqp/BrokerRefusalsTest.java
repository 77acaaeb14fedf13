package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/** A broker that refuses this client for a reason of configuration says so, naming what to check. */
@ExtendWith(RabbitExtension.class)
class BrokerRefusalsTest {

    @Test
    void a_wrong_password_fails_the_declaration_naming_the_login(RabbitBackend rabbit) {
        CachingConnectionFactory cf = factory(rabbit, "guest", "wrong", vhostOf(rabbit));
        try {
            assertThatThrownBy(() -> QueueTopology.declare(cf, "refusals", "refusals.dlq", QueueTopology.QueueType.CLASSIC,
                    java.util.Optional.empty()))
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageStartingWith("RabbitMQ at " + cf.getHost() + ":" + cf.getPort())
                    .hasMessageContaining("declaring queue 'refusals.dlq': the broker refused the login")
                    .hasMessageEndingWith("check the user name and password");
        } finally {
            cf.destroy();
        }
    }

    @Test
    void an_unknown_virtual_host_fails_the_declaration_saying_how_a_uri_names_one(RabbitBackend rabbit) {
        // RabbitMQ closes the connection with NOT_ALLOWED; the embedded Qpid answers otherwise (an IOException
        // without that close), and the %2F advice is about RabbitMQ's default virtual host anyway
        assumeTrue(rabbit.isRabbitMq(), "RabbitMQ's answer to an unknown virtual host; the embedded broker has none");
        String[] user = rabbit.uri().getUserInfo().split(":", 2);
        CachingConnectionFactory cf = factory(rabbit, user[0], user[1], "no-such-vhost");
        try {
            assertThatThrownBy(() -> QueueTopology.declare(cf, "refusals", "refusals.dlq", QueueTopology.QueueType.CLASSIC,
                    java.util.Optional.empty()))
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageStartingWith("RabbitMQ at " + cf.getHost() + ":" + cf.getPort() + " (virtual host 'no-such-vhost')")
                    .hasMessageContaining("the broker refused the virtual host")
                    .hasMessageContaining("%2F");
        } finally {
            cf.destroy();
        }
    }

    private static CachingConnectionFactory factory(RabbitBackend rabbit, String user, String password, String vhost) {
        URI uri = rabbit.uri();
        CachingConnectionFactory cf = new CachingConnectionFactory(uri.getHost(), uri.getPort());
        cf.setUsername(user);
        cf.setPassword(password);
        cf.setVirtualHost(vhost);
        return cf;
    }

    private static String vhostOf(RabbitBackend rabbit) {
        String path = rabbit.uri().getPath();
        return path == null || path.length() <= 1 ? "/" : java.net.URLDecoder.decode(path.substring(1),
                java.nio.charset.StandardCharsets.UTF_8);
    }
}
