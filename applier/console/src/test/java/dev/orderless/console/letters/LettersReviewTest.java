package dev.orderless.console.letters;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.backends.MongoBackend;
import dev.orderless.console.audit.AuditLog;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * Review of issue 52's letter store: letters that must not be lost on their way from a real dead-letter queue into
 * the store (embedded MongoDB). The test broker may not dead-letter by itself ({@code x-dead-letter-exchange}): where a
 * test needs RabbitMQ's own dead-lettering (a quorum queue's delivery limit), it moves the message as RabbitMQ does,
 * its headers kept and an {@code x-death} entry added.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class LettersReviewTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final String work = RabbitExtension.uniqueQueue("letters-review");
    private final String dlq = work + ".dlq";
    private ConnectionFactory rabbit;
    private MongoClient client;
    private LetterStore store;
    private LetterIngestion ingestion;
    private LetterActions actions;

    @BeforeEach
    void queuesAndStore(MongoBackend mongo, ConnectionFactory confirming) {
        rabbit = confirming;
        RabbitAdmin admin = new RabbitAdmin(rabbit);
        admin.declareQueue(QueueBuilder.durable(dlq).build());
        admin.declareQueue(QueueBuilder.durable(work).build());
        client = mongo.newClient();
        MongoDatabase database = client.getDatabase(MongoBackend.freshDatabaseName("letters-review"));
        store = LetterStore.create(database.getCollection("letters", BsonDocument.class), Duration.ofDays(14),
                Clock.systemUTC());
        AuditLog audit = AuditLog.create(database.getCollection("audit", BsonDocument.class), Clock.systemUTC());
        DeadLetterQueue letters = DeadLetterQueue.of(rabbit, work, dlq);
        ingestion = new LetterIngestion(store, letters);
        actions = new LetterActions(store, audit, Map.of(work, letters), Optional.of(Duration.ofHours(1)),
                Clock.systemUTC(), "review");
    }

    @AfterEach
    void stop() {
        ingestion.stop();
        RabbitAdmin admin = new RabbitAdmin(rabbit);
        admin.deleteQueue(work);
        admin.deleteQueue(dlq);
        admin.deleteQueue(dlq + ".parked");
        client.close();
    }

    @Test
    void a_replayed_letter_the_broker_dead_letters_again_is_stored_again_not_taken_for_the_one_replayed()
            throws Exception {
        publish(dlq, orderlessLetter("again"), "{\"entity\":\"again\"}");
        ingestion.start();
        awaitDead(1);
        String id = store.find(LetterQuery.dead(), Optional.empty(), 1).letters().get(0).id();
        assertThat(actions.replay(LetterQuery.ids(List.of(id)), 1, "operator").count()).isEqualTo(1);

        // the replayed message fails again where only the broker can dead-letter it (a quorum queue's delivery
        // limit after consumers crashed on it): RabbitMQ moves it with the headers it carries, x-death added
        try (Connection connection = rabbit.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            GetResponse replayed = Awaitility.await("the replayed letter in " + work).atMost(WAIT)
                    .until(() -> channel.basicGet(work, false), java.util.Objects::nonNull);
            Map<String, Object> headers = new HashMap<>(replayed.getProps().getHeaders());
            headers.put("x-death", List.of(Map.of("reason", "delivery_limit", "queue", work, "count", 1L,
                    "time", new java.util.Date(), "exchange", "", "routing-keys", List.of(work))));
            publish(dlq, replayed.getProps().builder().headers(headers).build(),
                    new String(replayed.getBody(), StandardCharsets.UTF_8));
            channel.basicAck(replayed.getEnvelope().getDeliveryTag(), false);
        }

        Awaitility.await("the letter dead-lettered again is waiting in the store").atMost(WAIT)
                .until(() -> store.count(LetterQuery.dead()), n -> n == 1);
    }

    @Test
    void a_letter_whose_header_mongodb_cannot_encode_does_not_hold_back_the_letters_behind_it() throws Exception {
        Map<String, Object> headers = new HashMap<>(orderlessLetter("odd").getHeaders());
        headers.put("bad\u0000name", "a header name AMQP carries and BSON cannot");
        publish(dlq, new AMQP.BasicProperties.Builder().headers(headers).deliveryMode(2).build(), "{}");
        publish(dlq, orderlessLetter("behind"), "{\"entity\":\"behind\"}");

        ingestion.start();

        Awaitility.await("the letter behind the odd one is stored").atMost(WAIT)
                .until(() -> store.count(LetterQuery.dead().withEntity("behind")), n -> n == 1);
        Awaitility.await("the odd letter is kept or set aside, not lost").atMost(WAIT)
                .until(() -> store.count(LetterQuery.ids(List.of()).withEntity("odd")), n -> n == 1);
        StoredLetter odd = store.find(LetterQuery.ids(List.of()).withEntity("odd"), Optional.empty(), 1).letters()
                .get(0);
        assertThat(odd.status()).isEqualTo(LetterStatus.PARKED);
        assertThat(odd.heldIn()).contains(dlq + ".parked");
    }

    // ---- helpers ----------------------------------------------------------------------------------------------

    /** The properties orderless's AMQP 0-9-1 consumer gives a letter it dead-letters. */
    private static AMQP.BasicProperties orderlessLetter(String entity) {
        Map<String, Object> headers = new HashMap<>();
        headers.put("x-orderless-reason", "missing 'seq' (entity '" + entity + "')");
        headers.put("x-orderless-reason-kind", "bad_input");
        headers.put("x-orderless-entity", entity);
        headers.put("x-orderless-dead-lettered-at", Instant.now().toString());
        headers.put("x-orderless-dead-letter-id", UUID.randomUUID().toString());
        return new AMQP.BasicProperties.Builder().headers(headers).deliveryMode(2).contentType("application/json")
                .build();
    }

    private void publish(String queue, AMQP.BasicProperties props, String body) throws Exception {
        try (Connection connection = rabbit.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            channel.confirmSelect();
            channel.basicPublish("", queue, props, body.getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(30_000);
        }
    }

    private void awaitDead(long n) {
        Awaitility.await(n + " dead letters stored").atMost(WAIT).until(() -> store.count(LetterQuery.dead()),
                count -> count == n);
    }
}
