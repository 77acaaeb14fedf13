package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.rabbit.EmbeddedQpid;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.ServerSocket;
import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/** What serve prints works beyond the embedded broker, and a serve that cannot start says so to eval too. */
@ExtendWith(RabbitExtension.class)
class ServeUrisTest {

    @Test
    void the_amqp_uri_serve_prints_names_a_virtual_host_rabbitmq_has(RabbitBackend rabbit) {
        URI printed;
        try (EmbeddedQpid embedded = EmbeddedQpid.start(0)) {
            printed = embedded.uri();
            assertThat(connects(printed)).as("the embedded broker answers its own URI").isTrue();
        }
        // the same URI, pointed at the broker the tests use (the real RabbitMQ in CI)
        URI elsewhere = URI.create(printed.getScheme() + "://" + rabbit.uri().getRawUserInfo() + "@"
                + rabbit.uri().getHost() + ":" + rabbit.uri().getPort() + printed.getRawPath());
        assertThat(connects(elsewhere)).as(elsewhere.getRawPath() + " on " + rabbit.description()).isTrue();
    }

    @Test
    void serve_detach_on_a_port_taken_by_something_else_fails_for_eval_too() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            CliRun serve = CliRun.of(Map.of(), "serve", "--detach", "--mongo-port", String.valueOf(taken.getLocalPort()),
                    "--amqp-port", "0");

            assertThat(serve.exit()).isEqualTo(1);
            assertThat(serve.out().strip()).as("what eval runs").isEqualTo("false");
            assertThat(serve.errLines()).singleElement().asString().startsWith("error: serve: port "
                    + taken.getLocalPort() + " is in use by something that is not a demo serve");
        }
    }

    private static boolean connects(URI uri) {
        CachingConnectionFactory factory = new CachingConnectionFactory(uri);
        try {
            factory.createConnection().close();
            return true;
        } finally {
            factory.destroy();
        }
    }
}
