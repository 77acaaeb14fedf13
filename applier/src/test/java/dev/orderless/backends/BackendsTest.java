package dev.orderless.backends;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.testing.MongoExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The backends chosen for this run answer, and a bad choice says what to change. */
@ExtendWith(MongoExtension.class)
class BackendsTest {

    @Test
    void the_chosen_mongodb_answers_a_ping(MongoClient client, MongoBackend backend) {
        Document pong = client.getDatabase("admin").runCommand(new Document("ping", 1));

        assertThat(pong.get("ok", Number.class).doubleValue()).as(backend.description()).isEqualTo(1.0);
    }

    @Test
    void the_chosen_broker_takes_a_confirmed_message_and_gives_it_back() throws Exception {
        try (RabbitBackend rabbit = Backends.rabbit()) {
            System.out.println("[orderless tests] AMQP broker: " + rabbit.description());
            ConnectionFactory factory = new ConnectionFactory();
            factory.setUri(rabbit.uri());
            try (Connection connection = factory.newConnection("orderless-backends-test");
                 Channel channel = connection.createChannel()) {
                // a queue of this run's own, so nothing left in a shared broker by earlier runs is seen
                String queue = "orderless.test." + UUID.randomUUID();
                channel.queueDeclare(queue, false, true, true, null);
                channel.confirmSelect();
                channel.basicPublish("", queue, null, "hello".getBytes(StandardCharsets.UTF_8));
                assertThat(channel.waitForConfirms(10_000)).isTrue();

                GetResponse got = Awaitility.await().atMost(Duration.ofSeconds(10))
                        .until(() -> channel.basicGet(queue, true), g -> g != null);
                assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("hello");
            }
        }
    }

    @Test
    void an_unknown_backend_mode_fails_naming_the_setting() {
        assertThatThrownBy(() -> Backends.mode(Optional.of("docker")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("orderless.backends must be 'embedded' or 'testcontainers', was 'docker'");
        assertThat(Backends.mode(Optional.empty())).isEqualTo(Backends.Mode.EMBEDDED);
        assertThat(Backends.mode(Optional.of(" testcontainers "))).isEqualTo(Backends.Mode.TESTCONTAINERS);
    }

    @Test
    void a_malformed_uri_fails_with_an_example_of_a_good_one() {
        assertThatThrownBy(() -> Backends.mongo(Optional.of("localhost:27017")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("expected e.g. mongodb://localhost:27017/?replicaSet=rs0");
        assertThatThrownBy(() -> Backends.rabbit(Optional.of("http://localhost:5672")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("must start with amqp:// or amqps://");
    }

    @Test
    void fresh_database_names_are_unique_and_within_mongodb_limits() {
        String a = MongoBackend.freshDatabaseName("Some.Test$Class-With-A-Very-Long-Name-Indeed-Yes");
        String b = MongoBackend.freshDatabaseName("Some.Test$Class-With-A-Very-Long-Name-Indeed-Yes");

        assertThat(a).isNotEqualTo(b).matches("[A-Za-z0-9_]+").hasSizeLessThanOrEqualTo(63);
    }
}
