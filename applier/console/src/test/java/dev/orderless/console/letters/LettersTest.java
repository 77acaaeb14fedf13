package dev.orderless.console.letters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.orderless.InvalidInputException;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.backends.MongoBackend;
import dev.orderless.console.audit.AuditLog;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
 * Letters moved from a real dead-letter queue into the store (embedded MongoDB unless MONGODB_URI), searched, and
 * acted on: what an operator does through the console, without the page.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class LettersTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final String work = RabbitExtension.uniqueQueue("letters");
    private final String dlq = work + ".dlq";
    private ConnectionFactory rabbit;
    private MongoClient client;
    private LetterStore store;
    private AuditLog audit;
    private LetterIngestion ingestion;
    private LetterActions actions;

    @BeforeEach
    void queuesAndStore(MongoBackend mongo, ConnectionFactory confirming) {
        rabbit = confirming;
        RabbitAdmin admin = new RabbitAdmin(rabbit);
        admin.declareQueue(QueueBuilder.durable(work).build());
        admin.declareQueue(QueueBuilder.durable(dlq).build());
        client = mongo.newClient();
        MongoDatabase database = client.getDatabase(MongoBackend.freshDatabaseName("letters"));
        store = LetterStore.create(database.getCollection("letters", BsonDocument.class), Duration.ofDays(14),
                Clock.systemUTC());
        audit = AuditLog.create(database.getCollection("audit", BsonDocument.class), Clock.systemUTC());
        DeadLetterQueue letters = DeadLetterQueue.of(rabbit, work, dlq);
        ingestion = new LetterIngestion(store, letters);
        actions = new LetterActions(store, audit, Map.of(work, letters), Optional.of(Duration.ofHours(1)),
                Clock.systemUTC(), "test-instance");
    }

    @AfterEach
    void stop() {
        ingestion.stop();
        RabbitAdmin admin = new RabbitAdmin(rabbit);
        admin.deleteQueue(work);
        admin.deleteQueue(dlq);
        client.close();
    }

    @Test
    void letters_past_the_first_thousand_are_stored_and_one_deep_letter_is_found_by_entity_and_replayed() throws Exception {
        List<Letter> letters = new ArrayList<>();
        for (int i = 0; i < 1_500; i++) {
            letters.add(Letter.of("bad_input", "missing 'seq'", "bulk-" + i));
        }
        letters.add(Letter.of("no_progress", "no progress on entity 'deep-one'", "deep-one"));
        publish(letters);

        ingestion.start();
        awaitStored(1_501);

        LetterStore.Page page = store.find(LetterQuery.dead().withEntity("deep-one"), Optional.empty(), 50);
        assertThat(page.total()).isEqualTo(1);
        assertThat(page.letters().get(0).kind()).isEqualTo("no_progress");
        LetterActions.Outcome outcome = actions.replay(LetterQuery.ids(List.of(page.letters().get(0).id())), 1,
                "operator");

        assertThat(outcome.result()).isEqualTo("replayed 1 letter(s)");
        GetResponse replayed = awaitOne(work);
        assertThat(new String(replayed.getBody(), StandardCharsets.UTF_8)).contains("deep-one");
        assertThat(replayed.getProps().getHeaders()).doesNotContainKey("x-orderless-reason")
                .doesNotContainKey("x-orderless-dead-letter-id").containsEntry("x-orderless-replay-count", 1);
        assertThat(store.count(LetterQuery.dead())).isEqualTo(1_500);
        assertThat(queueDepth(dlq)).as("every letter left the dead-letter queue once stored").isZero();
    }

    @Test
    void a_letter_taken_twice_is_stored_once() {
        AMQP.BasicProperties props = Letter.of("bad_input", "not json", "twice").properties();
        byte[] body = "not json".getBytes(StandardCharsets.UTF_8);

        int first = store.store(List.of(store.incoming(work, dlq, props, body)));
        int again = store.store(List.of(store.incoming(work, dlq, props, body)));

        assertThat(first).isEqualTo(1);
        assertThat(again).isZero();
        assertThat(store.count(LetterQuery.dead())).isEqualTo(1);
    }

    @Test
    void a_parked_letter_is_left_out_of_replay_all_and_un_parked_is_dead_again() throws Exception {
        publish(List.of(Letter.of("bad_input", "missing 'seq'", "a"), Letter.of("bad_input", "missing 'seq'", "b")));
        ingestion.start();
        awaitStored(2);

        assertThat(actions.park(LetterQuery.dead().withEntity("a"), 10, "operator").result())
                .isEqualTo("parked 1 letter(s)");
        assertThat(actions.replay(LetterQuery.dead(), 100, "operator").count()).isEqualTo(1);
        assertThat(store.count(LetterQuery.dead().withStatuses(List.of(LetterStatus.PARKED)))).isEqualTo(1);

        assertThat(actions.unpark(LetterQuery.dead().withStatuses(List.of(LetterStatus.PARKED)), 10, "operator")
                .count()).isEqualTo(1);
        assertThat(store.find(LetterQuery.dead(), Optional.empty(), 10).letters())
                .extracting(l -> l.entity().orElseThrow()).containsExactly("a");
    }

    @Test
    void an_edited_body_the_envelope_reader_refuses_is_refused_sends_nothing_and_is_on_record() throws Exception {
        publish(List.of(Letter.of("bad_input", "missing 'seq'", "e1")));
        ingestion.start();
        awaitStored(1);
        String id = store.find(LetterQuery.dead(), Optional.empty(), 1).letters().get(0).id();

        assertThatThrownBy(() -> actions.editAndReplay(id, "{\"entity\":\"e1\",\"op\":\"add\"}"
                .getBytes(StandardCharsets.UTF_8), "operator"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("the edited body is not an orderless"
                        + " message");
        assertThat(queueDepth(work)).isZero();
        assertThat(audit.of(id)).singleElement().satisfies(entry -> {
            assertThat(entry.ok()).isFalse();
            assertThat(entry.action()).isEqualTo("edit-replay");
            assertThat(entry.user()).isEqualTo("operator");
            assertThat(entry.queue()).as("the queue of the letter chosen by id").contains(work);
        });

        String fixed = "{\"entity\":\"e1\",\"seq\":3,\"op\":\"add\",\"field\":\"lines\",\"element\":\"x\"}";
        actions.editAndReplay(id, fixed.getBytes(StandardCharsets.UTF_8), "operator");

        assertThat(new String(awaitOne(work).getBody(), StandardCharsets.UTF_8)).isEqualTo(fixed);
        assertThat(store.get(id).orElseThrow().letter().status()).isEqualTo(LetterStatus.REPLAYED);
        assertThat(audit.of(id)).hasSize(2).first().satisfies(entry -> assertThat(entry.ok()).isTrue());
    }

    @Test
    void a_letter_older_than_the_grace_is_refused_by_a_replay_and_stays_dead() throws Exception {
        publish(List.of(Letter.of("bad_input", "missing 'seq'", "old").at(Instant.now().minus(Duration.ofHours(2)))));
        ingestion.start();
        awaitStored(1);

        LetterActions.Outcome outcome = actions.replay(LetterQuery.dead(), 10, "operator");

        assertThat(outcome.count()).isZero();
        assertThat(outcome.result()).contains("refused 1 older than the replay grace PT1H");
        assertThat(store.count(LetterQuery.dead())).isEqualTo(1);
    }

    @Test
    void a_letter_of_a_kind_orderless_does_not_know_is_listed_with_that_kind_and_can_be_acted_on() throws Exception {
        publish(List.of(Letter.of("made_up_kind", "someone else's reason", "odd")));
        ingestion.start();
        awaitStored(1);

        assertThat(store.groups()).singleElement().satisfies(group -> {
            assertThat(group.kind()).isEqualTo("made_up_kind");
            assertThat(group.count()).isEqualTo(1);
        });
        assertThat(actions.purge(LetterQuery.dead().withKind("made_up_kind"), 10, "operator").count()).isEqualTo(1);
        assertThat(store.get(store.find(LetterQuery.ids(List.of()).withKind("made_up_kind"), Optional.empty(), 1)
                .letters().get(0).id()).orElseThrow().body()).as("a purged letter keeps no body").isEmpty();
    }

    @Test
    void two_reads_at_once_agree_as_reading_takes_nothing_out_of_anyone_elses_sight() throws Exception {
        List<Letter> letters = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            letters.add(Letter.of(i % 3 == 0 ? "no_progress" : "bad_input", "reason " + (i % 3 == 0 ? "a" : "b"),
                    "k" + i));
        }
        publish(letters);
        ingestion.start();
        awaitStored(300);

        CompletableFuture<List<LetterStore.Group>> one = CompletableFuture.supplyAsync(store::groups);
        CompletableFuture<List<LetterStore.Group>> two = CompletableFuture.supplyAsync(store::groups);

        assertThat(one.get()).isEqualTo(two.get()).extracting(LetterStore.Group::count).containsExactly(200L, 100L);
    }

    @Test
    void pages_walk_every_letter_once_newest_first() throws Exception {
        List<Letter> letters = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            letters.add(Letter.of("bad_input", "missing 'seq'", "p" + i).at(Instant.now().minusSeconds(1000 - i)));
        }
        publish(letters);
        ingestion.start();
        awaitStored(120);

        List<String> seen = new ArrayList<>();
        Optional<String> after = Optional.empty();
        do {
            LetterStore.Page page = store.find(LetterQuery.dead(), after, 50);
            page.letters().forEach(l -> seen.add(l.entity().orElseThrow()));
            after = page.next();
        } while (after.isPresent());

        assertThat(seen).hasSize(120).doesNotHaveDuplicates().startsWith("p119", "p118");
    }

    @Test
    void a_letter_too_large_to_keep_is_moved_to_the_parking_queue_and_stored_parked_saying_where_it_is()
            throws Exception {
        Letter large = Letter.of("oversized", "message of 16777300 bytes", "big");
        byte[] body = new byte[LetterStore.MAX_BODY_BYTES + 1];
        try (Connection connection = rabbit.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            channel.confirmSelect();
            channel.basicPublish("", dlq, large.properties(), body);
            channel.basicPublish("", dlq, Letter.of("bad_input", "missing 'seq'", "behind").properties(),
                    "{}".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(30_000);
        }
        ingestion.start();
        awaitStored(2);

        StoredLetter held = store.find(LetterQuery.ids(List.of()).withEntity("big"), Optional.empty(), 1).letters()
                .get(0);
        assertThat(held.status()).isEqualTo(LetterStatus.PARKED);
        assertThat(held.heldIn()).contains(dlq + ".parked");
        assertThat(held.bodyBytes()).isEqualTo(body.length);
        assertThat(queueDepth(dlq + ".parked")).isEqualTo(1);
        assertThat(actions.replay(LetterQuery.ids(List.of(held.id())), 1, "operator").result())
                .contains("refused 1 too large for the console");
        new RabbitAdmin(rabbit).deleteQueue(dlq + ".parked");
    }

    // ---- helpers ----------------------------------------------------------------------------------------------

    /** A letter as orderless's consumer dead-letters it. */
    private record Letter(String kind, String reason, String entity, Instant at, String id) {
        static Letter of(String kind, String reason, String entity) {
            return new Letter(kind, reason, entity, Instant.now(), java.util.UUID.randomUUID().toString());
        }

        Letter at(Instant time) {
            return new Letter(kind, reason, entity, time, id);
        }

        AMQP.BasicProperties properties() {
            Map<String, Object> headers = new HashMap<>();
            headers.put("x-orderless-reason", reason + " (entity '" + entity + "')");
            headers.put("x-orderless-reason-kind", kind);
            headers.put("x-orderless-entity", entity);
            headers.put("x-orderless-dead-lettered-at", at.toString());
            headers.put("x-orderless-dead-letter-id", id);
            return new AMQP.BasicProperties.Builder().headers(headers).deliveryMode(2).contentType("application/json")
                    .build();
        }

        byte[] body() {
            return ("{\"entity\":\"" + entity + "\",\"op\":\"add\"}").getBytes(StandardCharsets.UTF_8);
        }
    }

    private void publish(List<Letter> letters) throws Exception {
        try (Connection connection = rabbit.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            channel.confirmSelect();
            for (Letter letter : letters) {
                channel.basicPublish("", dlq, letter.properties(), letter.body());
            }
            channel.waitForConfirmsOrDie(30_000);
        }
    }

    private void awaitStored(long n) {
        Awaitility.await(n + " letters stored").atMost(WAIT).until(() -> store.count(LetterQuery.ids(List.of())) >= n);
        assertThat(store.count(LetterQuery.ids(List.of()))).isEqualTo(n);
    }

    private GetResponse awaitOne(String queue) throws Exception {
        try (Connection connection = rabbit.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            return Awaitility.await("a message in " + queue).atMost(WAIT).until(() -> channel.basicGet(queue, true),
                    java.util.Objects::nonNull);
        }
    }

    private long queueDepth(String queue) throws Exception {
        try (Connection connection = rabbit.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            return channel.queueDeclarePassive(queue).getMessageCount();
        }
    }
}
