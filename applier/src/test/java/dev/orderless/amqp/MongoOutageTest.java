package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.RabbitExtension;
import dev.orderless.testing.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * MongoDB goes away mid-run (every connection cut by a proxy, new ones refused) and comes back: nothing
 * is lost, acked, or dead-lettered while it is gone; the consumers back off, then finish by themselves.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class MongoOutageTest {
    private TcpProxy proxy;
    private MongoClient client;
    private MongoDatabase db;

    @BeforeEach
    void connectThroughAProxy(MongoBackend backend, MongoDatabase fresh) {
        var target = new ConnectionString(backend.connectionString()).getHosts().get(0).split(":");
        proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
        client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port()
                + "/?directConnection=true&serverSelectionTimeoutMS=1000&connectTimeoutMS=1000&socketTimeoutMS=3000");
        db = client.getDatabase(fresh.getName());
    }

    @AfterEach
    void disconnect() {
        client.close();
        proxy.close();
    }

    @Test
    void an_outage_mid_run_loses_nothing_and_the_state_converges_after_it(ConnectionFactory cf) throws Exception {
        long seed = Long.getLong("orderless.seed", System.nanoTime());
        Random random = new Random(seed);
        List<Operation> history = Histories.operations(Histories.steps(random, 2000, 2000, 100), "o");
        List<Operation> delivered = Histories.delivery(history, 0.2, random);

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "outage")) {
            fixture.start(fixture.options(4));
            fixture.publish(delivered);
            Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> fixture.acked() >= delivered.size() / 4.0);

            proxy.cut();
            Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> fixture.retried() >= 8);
            double ackedDuringOutage = fixture.acked();
            assertThat(fixture.deadLettered()).as("nothing dead-lettered while MongoDB is gone").isZero();
            assertThat(ackedDuringOutage).as("not all done before the cut").isLessThan(delivered.size());
            proxy.restore();

            fixture.awaitHandled(delivered.size(), Duration.ofMinutes(3));
            System.out.printf("[outage] seed %d: %d messages; cut after %.0f acked, %.0f retries while down,"
                    + " all %.0f acked after, dead-lettered %.0f%n", seed, delivered.size(), ackedDuringOutage,
                    fixture.retried(), fixture.acked(), fixture.deadLettered());
            assertThat(fixture.acked()).isEqualTo(delivered.size());
            assertThat(fixture.deadLettered()).isZero();
            fixture.awaitEmpty(fixture.queue);
            fixture.assertConverged(history);
        }
    }

    @Test
    void stopping_while_mongodb_is_down_hands_the_messages_back(ConnectionFactory cf) throws Exception {
        List<Operation> history = Histories.operations(Histories.steps(new Random(7), 50, 50, 10), "d");

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "down")) {
            proxy.cut();
            OperationConsumer consumer = fixture.start(fixture.options(2).withRetry(Duration.ofSeconds(1), Duration.ofSeconds(30)));
            fixture.publish(history);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.retried() >= 2);

            consumer.close();

            assertThat(fixture.acked() + fixture.deadLettered()).isZero();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.messagesIn(fixture.queue) == history.size());
            proxy.restore();
            fixture.start(fixture.options(2));
            fixture.awaitHandled(history.size(), Duration.ofMinutes(1));
            fixture.assertConverged(history);
        }
    }
}
