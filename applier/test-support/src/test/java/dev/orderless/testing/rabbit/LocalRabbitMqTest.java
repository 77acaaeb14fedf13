package dev.orderless.testing.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.rabbit.RabbitBackend;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Tests that stop a broker or raise its alarm do so only to the broker they were given. */
@ExtendWith(RabbitExtension.class)
class LocalRabbitMqTest {

    @Test
    void a_broker_uri_on_another_port_than_the_local_nodes_is_never_acted_on(RabbitBackend rabbit) {
        RabbitBackend elsewhere = new RabbitBackend() {   // a demo's broker on 5673, say, beside a RabbitMQ on 5672
            @Override
            public Kind kind() {
                return Kind.EXTERNAL;
            }

            @Override
            public URI uri() {
                return URI.create("amqp://guest:guest@127.0.0.1:" + (rabbit.uri().getPort() + 1) + "/%2F");
            }

            @Override
            public boolean isRabbitMq() {
                return true;
            }

            @Override
            public String description() {
                return "elsewhere";
            }

            @Override
            public void close() {
            }
        };

        assertThat(LocalRabbitMq.unusable(elsewhere)).isPresent();
    }
}
