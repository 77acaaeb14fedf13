package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.OnRabbitMq4;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/** {@code publish} and {@code consume --protocol amqp-1.0} on RabbitMQ 4: converged, poison dead-lettered once. */
@OnRabbitMq4
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class DemoAmqp10Test {

    @Test
    void publish_and_consume_over_amqp_1_0_converge_and_verify_finds_each_poison_message_dead_lettered_once(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("demo-amqp10");
        String database = MongoBackend.freshDatabaseName("demo");
        Map<String, String> env = Map.of("MONGODB_URI", mongo.connectionString(), "RABBITMQ_URI", rabbit.uri().toString());
        try {
            CliRun publish = CliRun.of(env, "publish", "--protocol", "amqp-1.0", "--ops", "300", "--students", "20",
                    "--shuffle", "--duplicate-rate", "0.2", "--poison", "4", "--database", database, "--queue", queue);
            assertThat(publish.out()).contains("protocol=amqp-1.0");
            assertThat(publish.exit()).as(publish.err()).isZero();

            CliRun consume = CliRun.of(env, "consume", "--protocol", "amqp-1.0", "--consumers", "2",
                    "--exit-when-idle", "1", "--database", database, "--queue", queue);
            assertThat(consume.out()).contains("over AMQP 1.0");
            assertThat(consume.exit()).as(consume.err()).isZero();

            CliRun verify = CliRun.of(env, "verify", "--database", database, "--queue", queue, "--wait", "30");
            assertThat(verify.result()).contains("converged=true", "diverged=0", "dead_lettered=4", "lost=0");
            assertThat(new RabbitAdmin(cf).getQueueInfo(queue + ".dlq").getMessageCount())
                    .as("letters, counting copies").isEqualTo(4);
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }
}
