package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/** The consumer's health, which a liveness probe calls: it answers at once, whatever the broker does. */
@ExtendWith(MongoExtension.class)
class ConsumerHealthTest {

    @Test
    void health_answers_while_the_start_waits_on_a_broker_host_that_never_answers(MongoDatabase db) throws Exception {
        List<Socket> held = new CopyOnWriteArrayList<>();
        try (ServerSocket blackHole = new ServerSocket(0)) {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(blackHole.accept());   // takes the connection, never says a word
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            CachingConnectionFactory cf = new CachingConnectionFactory("127.0.0.1", blackHole.getLocalPort());
            cf.getRabbitConnectionFactory().setHandshakeTimeout(4000);
            OrderlessConsumer consumer = OrderlessConsumer.overAmqp091(cf, GuardedApplier.create(db.getCollection("entities",
                    BsonDocument.class), CollectionSchema.builder().register("name").build()),
                    ConsumerOptions.ofDefaults("health"), OrderlessProperties.QueueType.CLASSIC, new SimpleMeterRegistry(),
                    Optional.empty(), Optional::empty, builder -> builder);
            try {
                CompletableFuture<Void> starting = CompletableFuture.runAsync(consumer::start);
                Awaitility.await("the start is connecting").atMost(Duration.ofSeconds(10)).until(() -> !held.isEmpty());

                Health health = CompletableFuture.supplyAsync(() -> new OrderlessConsumerHealth(consumer).health())
                        .get(3, TimeUnit.SECONDS);   // bounded: before, it waited for the start's lock

                assertThat(starting).as("the start was still connecting when health answered").isNotDone();
                assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                assertThat(health.getDetails()).containsEntry("queue", "health").doesNotContainKey("deadLetters");
                starting.get(30, TimeUnit.SECONDS);
                assertThat(consumer.waitingFor()).hasValueSatisfying(why -> assertThat(why)
                        .contains("the broker does not answer"));
            } finally {
                consumer.stop();
                cf.destroy();
                for (Socket socket : held) {
                    socket.close();
                }
            }
        }
    }
}
