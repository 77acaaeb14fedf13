package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code orderless.consumer.protocol}: what it takes, and the start-up errors that name what to change. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ProtocolBootTest {
    private ApplicationContextRunner runner;

    @BeforeEach
    void setUp(MongoBackend mongo, RabbitBackend rabbit) {
        runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory(rabbit.uri()))
                .withBean(RabbitConnectionDetails.class, () -> () -> List.of(
                        new RabbitConnectionDetails.Address(rabbit.uri().getHost(), rabbit.uri().getPort())))
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=students",
                        "orderless.consumer.queue=" + RabbitExtension.uniqueQueue("protocol"));
    }

    @Test
    void the_default_is_amqp_0_9_1() {
        runner.run(context -> assertThat(context.getBean(OrderlessConsumer.class).protocol())
                .isEqualTo(OrderlessProperties.Protocol.AMQP_0_9_1));
    }

    @Test
    void amqp_1_0_is_written_as_rabbitmq_writes_it() {
        // the consumer is not asked to start here: the broker of this run may be RabbitMQ 3, which has no AMQP 1.0
        runner.withPropertyValues("orderless.consumer.protocol=amqp-1.0", "spring.main.lazy-initialization=true")
                .run(context -> assertThat(context.getBean(OrderlessProperties.class).consumer().protocol())
                        .isEqualTo(OrderlessProperties.Protocol.AMQP_1_0));
    }

    @Test
    void amqp_1_0_with_a_classic_queue_fails_the_start_naming_both_properties() {
        runner.withPropertyValues("orderless.consumer.protocol=amqp-1.0", "orderless.consumer.queue-type=classic")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("orderless.consumer.protocol=amqp-1.0 needs a quorum queue")
                        .hasMessageContaining("orderless.consumer.queue-type"));
    }

    @Test
    void amqp_1_0_over_tls_fails_the_start_naming_the_property_it_does_not_take_yet() {
        for (String tls : new String[] {"spring.rabbitmq.ssl.enabled=true",
                "spring.rabbitmq.addresses=amqps://broker.example:5671"}) {
            runner.withPropertyValues("orderless.consumer.protocol=amqp-1.0", tls)
                    .run(context -> assertThat(context).getFailure().rootCause()
                            .hasMessageContaining("orderless.consumer.protocol=amqp-1.0 does not take TLS yet")
                            .hasMessageContaining("spring.rabbitmq.ssl.enabled"));
        }
    }

    @Test
    void amqp_1_0_without_its_artifact_fails_the_start_saying_which_to_add() {
        runner.withClassLoader(new FilteredClassLoader("dev.orderless.amqp10"))
                .withPropertyValues("orderless.consumer.protocol=amqp-1.0")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("needs dev.orderless:orderless-rabbit-amqp10 on the class path"));
    }

    @Test
    void an_unknown_protocol_fails_the_start_naming_the_property() {
        runner.withPropertyValues("orderless.consumer.protocol=stomp")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("orderless.consumer.protocol"));
    }
}
