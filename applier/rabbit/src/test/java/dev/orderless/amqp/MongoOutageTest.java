package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
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
 * is lost, acked, or dead-lettered while it is gone, even when it is gone several times longer than the
 * consumer's maxHold; the consumers back off, then finish by themselves. And the other side of it:
 * messages that fail on their own while MongoDB serves are not mistaken for an outage.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class MongoOutageTest {
    /** Much shorter than the default, so the cut outlasts it several times over. */
    private static final Duration MAX_HOLD = Duration.ofSeconds(1);

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
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(random, 2000, 2000, 100), "o");
        List<Operation> delivered = Histories.delivery(history, 0.2, random);

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "outage",
                Histories.ALL_TYPES)) {
            fixture.start(fixture.options(4).withMaxHold(MAX_HOLD));
            int half = delivered.size() / 2;
            fixture.publish(delivered.subList(0, half));
            Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> fixture.acked() >= half / 2.0);

            // batches drain the first half fast: the second half is published into the outage
            proxy.cut();
            fixture.publish(delivered.subList(half, delivered.size()));
            Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> fixture.retried() >= 8);
            // the cut lasts well past maxHold: an outage holds messages, it never dead-letters them
            Awaitility.await("nothing dead-lettered for 3 x maxHold while MongoDB is gone")
                    .during(MAX_HOLD.multipliedBy(3)).atMost(MAX_HOLD.multipliedBy(3).plusSeconds(10))
                    .until(() -> fixture.deadLettered() == 0 && fixture.acked() < delivered.size());
            double ackedDuringOutage = fixture.acked();
            assertThat(fixture.deadLettered()).as("nothing dead-lettered while MongoDB is gone").isZero();
            assertThat(ackedDuringOutage).as("not all done before the cut").isLessThan(delivered.size());
            proxy.restore();

            fixture.awaitHandled(delivered.size(), Duration.ofMinutes(3));
            System.out.printf("[outage] seed %d: %d messages; cut after %.0f acked, for more than %d x maxHold"
                    + " (%d ms), %.0f retries while down, all %.0f acked after, dead-lettered %.0f%n", seed,
                    delivered.size(), ackedDuringOutage, 3, MAX_HOLD.toMillis(), fixture.retried(), fixture.acked(),
                    fixture.deadLettered());
            assertThat(fixture.acked()).isEqualTo(delivered.size());
            assertThat(fixture.deadLettered()).isZero();
            fixture.awaitEmpty(fixture.queue);
            fixture.assertConverged(history);
        }
    }

    @Test
    void a_consumer_whose_mongodb_is_down_says_it_waits_for_mongodb_naming_its_address_until_it_answers(ConnectionFactory cf)
            throws Exception {
        List<Operation> history = Histories.operations(Histories.steps(new Random(11), 30, 30, 5), "w");

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "wait")) {
            proxy.cut();
            OperationConsumer consumer = fixture.start(fixture.options(2).withBackoff(Backoff.of(Duration.ofMillis(200),
                    Duration.ofSeconds(1))));
            assertThat(consumer.waitingFor()).as("nothing failed yet").isEmpty();
            fixture.publish(history);

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> consumer.waitingFor().isPresent());
            assertThat(consumer.waitingFor().orElseThrow()).startsWith("MongoDB: ")
                    .contains("MongoDB at 127.0.0.1:" + proxy.port() + " unavailable");
            assertThat(fixture.acked() + fixture.deadLettered()).as("held, not lost").isZero();
            proxy.restore();

            fixture.awaitHandled(history.size(), Duration.ofMinutes(1));
            assertThat(consumer.waitingFor()).as("MongoDB answered").isEmpty();
            fixture.assertConverged(history);
        }
    }

    @Test
    void stopping_while_mongodb_is_down_hands_the_messages_back(ConnectionFactory cf) throws Exception {
        List<Operation> history = Histories.operations(Histories.steps(new Random(7), 50, 50, 10), "d");

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "down")) {
            proxy.cut();
            OperationConsumer consumer = fixture.start(fixture.options(2).withBackoff(Backoff.of(Duration.ofSeconds(1), Duration.ofSeconds(30))));
            fixture.publish(history);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.retried() >= 2);
            assertThat(consumer.retrying()).as("messages retried, one per consumer thread").isBetween(1, 2);

            consumer.close();

            assertThat(consumer.retrying()).as("none retried once handed back").isZero();
            assertThat(fixture.acked() + fixture.deadLettered()).isZero();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.messagesIn(fixture.queue) == history.size());
            proxy.restore();
            fixture.start(fixture.options(2));
            fixture.awaitHandled(history.size(), Duration.ofMinutes(1));
            fixture.assertConverged(history);
        }
    }

    @Test
    void retrying_counts_the_one_message_a_thread_retries_while_the_others_wait_unacked(ConnectionFactory cf)
            throws Exception {
        List<Operation> three = List.of(Operation.assign("r1", 1, "name", new org.bson.BsonString("Ada")),
                Operation.assign("r2", 1, "name", new org.bson.BsonString("Bea")),
                Operation.assign("r3", 1, "name", new org.bson.BsonString("Cy")));

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "retrying")) {
            proxy.cut();
            OperationConsumer consumer = fixture.start(fixture.options(1).perMessage().withPrefetch(3));
            fixture.publish(three);
            // the prefetch lets the broker deliver all three to the one thread, which retries the first
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.retried() >= 2);

            assertThat(consumer.retrying()).as("the one message its only thread retries").isEqualTo(1);
            assertThat(fixture.meters.get("orderless.consume.retrying").tag("queue", fixture.queue).gauge().value())
                    .isEqualTo(1.0);
            assertThat(fixture.acked() + fixture.deadLettered()).as("all three held unacked").isZero();
            proxy.restore();
            fixture.awaitHandled(three.size(), Duration.ofMinutes(1));
            assertThat(consumer.retrying()).as("nothing retried once MongoDB answers").isZero();
        }
    }

    @Test
    void bad_input_refused_while_every_write_fails_does_not_make_held_messages_look_served(ConnectionFactory cf)
            throws Exception {
        List<Operation> good = List.of(Operation.assign("b1", 1, "name", new org.bson.BsonString("Ada")),
                Operation.assign("b2", 1, "name", new org.bson.BsonString("Bea")));
        java.util.concurrent.atomic.AtomicInteger bad = new java.util.concurrent.atomic.AtomicInteger();

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "badout")) {
            // every operation on the collection loses its connection mid-way: an error that alone cannot say
            // whether MongoDB is down for everyone, so the consumer weighs what else it saw
            proxy.dropWhenClientSends("entities");
            fixture.start(fixture.options(4).perMessage().withPrefetch(1).withMaxHold(MAX_HOLD));
            fixture.publish(good);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.retried() >= 4);
            // while both good messages hold, the other consumers keep refusing bad input (one more per poll, on a
            // field the schema does not declare):
            // refusals that never reached MongoDB must not count as MongoDB serving
            Awaitility.await("no good message dead-lettered for 3 x maxHold while bad input flows")
                    .during(MAX_HOLD.multipliedBy(3)).atMost(MAX_HOLD.multipliedBy(3).plusSeconds(10))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        fixture.publishRaw(List.of(("{\"entity\":\"p" + bad.incrementAndGet() + "\",\"seq\":1,"
                                + "\"op\":\"add\",\"field\":\"hobbies\",\"element\":\"x\"}")
                                .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                        return fixture.count("orderless.consume.dead_lettered", "reason", "held_too_long") == 0
                                && fixture.acked() == 0;
                    });
            proxy.dropWhenClientSends("");

            fixture.awaitHandled(good.size() + bad.get(), Duration.ofMinutes(1));
            System.out.printf("[outage] %d bad inputs refused while 2 good messages held while every write failed;"
                    + " held too long: %.0f%n", bad.get(), fixture.count("orderless.consume.dead_lettered", "reason",
                    "held_too_long"));
            assertThat(fixture.count("orderless.consume.dead_lettered", "reason", "unknown_field")).isEqualTo(bad.get());
            assertThat(fixture.acked()).isEqualTo(good.size());
            fixture.assertConverged(good);
        }
    }

    @Test
    void two_messages_failing_on_their_own_with_nothing_else_to_do_do_not_hold_each_other_up(ConnectionFactory cf)
            throws Exception {
        List<Operation> alone = List.of(Operation.assign("alone-1", 1, "name", new org.bson.BsonString("Ada")),
                Operation.assign("alone-2", 1, "name", new org.bson.BsonString("Bea")));

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db.getCollection("entities", BsonDocument.class), "alone")) {
            // each consumer holds one message that MongoDB drops while it serves everything else: neither
            // failure may count as evidence that MongoDB is down for the other (the write probe answers)
            proxy.dropWhenClientSends("alone-");
            fixture.start(fixture.options(2).perMessage().withPrefetch(1).withMaxHold(MAX_HOLD));
            fixture.publish(alone);

            fixture.awaitHandled(alone.size(), Duration.ofMinutes(1));
            assertThat(fixture.count("orderless.consume.dead_lettered", "reason", "held_too_long")).isEqualTo(2);
            assertThat(fixture.acked()).isZero();
        }
    }
}
