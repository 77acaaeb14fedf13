package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.OnRabbitMq4;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code orderless.consumer.protocol=amqp-1.0} on a RabbitMQ 4: the application consumes over AMQP 1.0. */
@OnRabbitMq4
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class Amqp10BootTest {

    @Test
    void the_consumer_applies_over_amqp_1_0_and_the_broker_dead_letters_poison_with_its_reason(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf) throws Exception {
        String queue = RabbitExtension.uniqueQueue("boot-amqp10");
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory(rabbit.uri()))
                .withBean(RabbitConnectionDetails.class, () -> () -> List.of(
                        new RabbitConnectionDetails.Address(rabbit.uri().getHost(), rabbit.uri().getPort())))
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=boot_amqp10", "orderless.collection=students",
                        "orderless.consumer.queue=" + queue, "orderless.consumer.protocol=amqp-1.0")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    OrderlessConsumer consumer = context.getBean(OrderlessConsumer.class);
                    Awaitility.await().atMost(Duration.ofSeconds(20)).until(consumer::isConsuming);
                    Envelope envelope = new Envelope();
                    ConfirmedPublisher.publishAll(cf, queue, List.of(
                            envelope.encode(Operation.assign("s1", 1, "name", new BsonString("Ada"))),
                            "this is not json".getBytes(StandardCharsets.UTF_8)));

                    MongoClient client = context.getBean(MongoClient.class);
                    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> client.getDatabase("boot_amqp10")
                            .getCollection("students", BsonDocument.class).countDocuments() == 1);
                    Message letter = new RabbitTemplate(cf).receive(queue + ".dlq", 20_000);
                    assertThat(letter).isNotNull();
                    Map<String, Object> headers = letter.getMessageProperties().getHeaders();
                    assertThat(String.valueOf(headers.get("x-opt-orderless-reason"))).startsWith("not JSON");
                    assertThat(new OrderlessConsumerHealth(consumer).health().getStatus()).isEqualTo(Status.UP);
                    assertThat(new OrderlessConsumerHealth(consumer).health().getDetails())
                            .containsEntry("protocol", "amqp-1.0");
                });
    }
}
