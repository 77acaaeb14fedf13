package dev.orderless.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.orderless.Backoff;
import dev.orderless.InvalidInputException;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.message.Envelope;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.stamp.HybridLogicalClock;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.testing.FailPoint;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import dev.orderless.testing.TcpProxy;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The outbox and the dead letters at their edges, each case ending published, parked with its reason,
 * refused up front, or stopped as FAILED with why: never held in silence, never a dead thread that says
 * it runs. Prints the {@code [outbox-edges]} table: each case, its outcome, how long it was held, and the
 * reason.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OutboxEdgesTest {
    private static final List<String> ROWS = new ArrayList<>();
    private static final Duration BOUND = Duration.ofSeconds(30);
    private final Envelope envelope = new Envelope();

    private static void row(String edge, String outcome, Duration held, String reason) {
        ROWS.add(String.format("%-52s | %-34s | %8s | %s", edge, outcome, held.toMillis() + " ms",
                reason.length() > 150 ? reason.substring(0, 147) + "..." : reason));
    }

    @AfterAll
    static void printTheTable() {
        System.out.printf("[outbox-edges] %-52s | %-34s | %8s | %s%n", "case", "outcome", "held", "reason");
        ROWS.stream().sorted().forEach(r -> System.out.println("[outbox-edges] " + r));
    }

    @Test
    void an_entity_id_longer_than_an_operation_may_have_is_refused_by_record_before_anything_is_stamped(
            MongoDatabase db) {
        MongoCollection<BsonDocument> counters = db.getCollection("counters", BsonDocument.class);
        Outbox outbox = Outbox.create(db.getCollection("outbox_long", BsonDocument.class),
                MongoCounterStamper.create(counters), OutboxOptions.ofDefaults());
        String entity = "e".repeat(600);

        assertThatThrownBy(() -> outbox.record(entity, seq -> Operation.delete(entity, seq)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("the entity id is 600 characters, more than the 512 an operation may have");
        assertThat(counters.countDocuments()).as("nothing stamped").isZero();
        assertThat(db.getCollection("outbox_long").countDocuments()).as("nothing recorded").isZero();
        row("entity id of 600 characters", "refused by record", Duration.ZERO,
                "InvalidInputException: the entity id is 600 characters, more than the 512 an operation may have");
    }

    @Test
    void a_message_larger_than_the_consumers_take_is_refused_by_record(MongoDatabase db) {
        Outbox outbox = Outbox.create(db.getCollection("outbox_big", BsonDocument.class), HybridLogicalClock.create(1),
                OutboxOptions.ofDefaults());
        BsonDocument attrs = new BsonDocument("notes", new BsonString("x".repeat(300 * 1024)));

        assertThatThrownBy(() -> outbox.record("s1", seq -> Operation.add("s1", seq, "classes", "C1", attrs)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("more than maxMessageBytes (262144");
        assertThat(db.getCollection("outbox_big").countDocuments()).isZero();
        row("message of 300 KiB", "refused by record", Duration.ZERO,
                "InvalidInputException: more than maxMessageBytes (262144, the consumers' limit by default)");
    }

    @Test
    void an_entity_id_of_200_cyrillic_characters_is_published(MongoDatabase db, ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_cyrillic", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(2), OutboxOptions.ofDefaults());
        String entity = "ж".repeat(200);   // 400 bytes of UTF-8: more than an AMQP short string holds
        Instant recorded = Instant.now();
        Operation op = outbox.record(entity, seq -> Operation.add(entity, seq, "classes", "CS 101"));

        try (OutboxRelay relay = OutboxRelay.start(entries, ConfirmingPublisher.toQueue(cf, queue,
                PublisherOptions.ofDefaults()), RelayOptions.ofDefaults())) {
            Awaitility.await("published and removed").atMost(BOUND).until(() -> entries.countDocuments() == 0);
            assertThat(relay.state()).isEqualTo(OutboxRelay.State.RUNNING);
        }
        assertThat(receive(cf, queue)).containsExactly(op);
        row("entity id of 200 Cyrillic characters (400 bytes)", "published", Duration.between(recorded, Instant.now()),
                "the message-id is a 32-character hash, whatever the entity");
    }

    @Test
    void an_entry_whose_own_message_cannot_be_sent_is_parked_with_why_while_the_others_go_through(
            MongoDatabase db, ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_refused", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(3), OutboxOptions.ofDefaults());
        // a tracing handler that puts a header no AMQP client can encode on one entity's messages
        ObservationRegistry tracing = registry(context -> {
            if ("poison".equals(entity(context))) {
                context.getSetter().set(context.getCarrier(), "k".repeat(300), "v");
            }
        });
        Instant recorded = Instant.now();
        outbox.record("poison", seq -> Operation.delete("poison", seq));
        AtomicInteger good = new AtomicInteger();

        try (OutboxRelay relay = OutboxRelay.start(entries, ConfirmingPublisher.toQueue(cf, queue,
                PublisherOptions.ofDefaults().withObservations(tracing)), RelayOptions.ofDefaults()
                .withBackoff(Backoff.of(Duration.ofMillis(20), Duration.ofMillis(200))))) {
            Awaitility.await("parked, while good entries keep going through").atMost(BOUND)
                    .pollInterval(Duration.ofMillis(100)).until(() -> {
                        int n = good.incrementAndGet();
                        outbox.record("good-" + n, seq -> Operation.delete("good-" + n, seq));
                        return outbox.parked().count() == 1;
                    });
            Awaitility.await("the good entries published").atMost(BOUND).until(() -> outbox.backlog() == 0);
            assertThat(relay.state()).isEqualTo(OutboxRelay.State.RUNNING);
        }
        ParkedEntry parked = outbox.parked().list(10).get(0);
        assertThat(parked.entity()).isEqualTo("poison");
        assertThat(parked.reason()).contains("could not be sent 3 times while other entries went through")
                .contains("Short string too long");
        assertThat(receive(cf, queue)).hasSize(good.get()).noneMatch(op -> op.entity().equals("poison"));
        row("a header its tracing handler adds cannot be encoded", "parked after 3 refusals",
                Duration.between(recorded, parked.parkedAt()), parked.reason());
    }

    @Test
    void an_error_on_the_relay_thread_ends_it_as_failed_with_why_and_the_entries_stay(MongoDatabase db,
                                                                                      ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_error", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(4), OutboxOptions.ofDefaults());
        ObservationRegistry clash = registry(context -> {
            throw new NoSuchMethodError("'void io.micrometer.tracing.Span.tagOf(java.lang.String)'");
        });
        outbox.record("s1", seq -> Operation.delete("s1", seq));
        outbox.record("s2", seq -> Operation.delete("s2", seq));
        Instant started = Instant.now();

        try (OutboxRelay relay = OutboxRelay.start(entries, ConfirmingPublisher.toQueue(cf, queue,
                PublisherOptions.ofDefaults().withObservations(clash)), RelayOptions.ofDefaults())) {
            Awaitility.await("FAILED, never a dead thread that says it runs").atMost(BOUND)
                    .until(() -> relay.state() == OutboxRelay.State.FAILED);
            assertThat(relay.problem()).hasValueSatisfying(p -> assertThat(p).contains("NoSuchMethodError"));
            Duration held = Duration.between(started, Instant.now());
            assertThat(entries.countDocuments()).as("nothing lost").isEqualTo(2);
            assertThat(entries.countDocuments(new BsonDocument("claim", new BsonDocument("$exists",
                    org.bson.BsonBoolean.TRUE)))).as("the claim handed back, for other relays").isZero();
            row("NoSuchMethodError on the relay thread", "relay FAILED, entries kept", held, relay.problem().get());
        }
    }

    @Test
    void parked_entries_do_not_fill_the_backlog_and_are_listed_retried_and_purged(MongoDatabase db,
                                                                                  ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_parked", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(5), OutboxOptions.ofDefaults()
                .withMaxBacklog(3).withBacklogCheck(Duration.ofMillis(1)));
        for (int i = 0; i < 3; i++) {   // written by hand: not operations
            entries.insertOne(new BsonDocument("_id", new BsonObjectId(new ObjectId()))
                    .append("entity", new BsonString("x" + i)).append("seq", new org.bson.BsonInt64(i + 1))
                    .append("body", new BsonBinary("{not json".getBytes(StandardCharsets.UTF_8)))
                    .append("due", new BsonDateTime(0)));
        }
        Instant started = Instant.now();
        try (OutboxRelay relay = OutboxRelay.start(entries, ConfirmingPublisher.toQueue(cf, queue,
                PublisherOptions.ofDefaults()), RelayOptions.ofDefaults().withSweepInterval(Duration.ofMillis(200)))) {
            Awaitility.await("the three parked").atMost(BOUND).until(() -> outbox.parked().count() == 3
                    && relay.parked() == 3);
            assertThat(outbox.backlog()).as("parked entries are not waiting").isZero();
            assertThat(outbox.oldest()).isEmpty();
            assertThat(relay.backlog()).isZero();
            assertThat(relay.oldest()).isEmpty();
            Operation op = outbox.record("s1", seq -> Operation.delete("s1", seq));   // the limit is 3: still room
            Awaitility.await("published").atMost(BOUND).until(() -> entries.countDocuments() == 3);

            List<ParkedEntry> parked = outbox.parked().list(10);
            assertThat(parked).extracting(ParkedEntry::entity).containsExactly("x0", "x1", "x2");
            assertThat(parked).allSatisfy(p -> assertThat(p.reason()).startsWith("not an operation"));
            assertThat(outbox.parked().purge(List.of(parked.get(0).id()))).isEqualTo(1);
            assertThat(outbox.parked().retryAll()).isEqualTo(2);
            Awaitility.await("retried, and parked again: still not operations").atMost(BOUND)
                    .until(() -> outbox.parked().count() == 2 && entries.countDocuments() == 2);
            assertThat(outbox.parked().purgeAll()).isEqualTo(2);
            assertThat(entries.countDocuments()).isZero();
            assertThat(receive(cf, queue)).containsExactly(op);
            row("3 parked entries, backlog limit 3", "recorded and published beside them",
                    Duration.between(started, Instant.now()), "parked entries count neither in backlog nor in oldest");
        }
        assertThatThrownBy(() -> outbox.parked().retry(List.of("nope"))).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'nope' is not an outbox entry id");
    }

    @Test
    void entries_recorded_while_the_broker_is_away_longer_than_the_claim_ttl_are_published_once_it_is_back(
            MongoDatabase db, RabbitBackend rabbit, ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_away", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(6), OutboxOptions.ofDefaults());
        List<Operation> ops = new ArrayList<>();
        try (TcpProxy proxy = TcpProxy.start(rabbit.uri().getHost(), rabbit.uri().getPort())) {
            CachingConnectionFactory viaProxy = new CachingConnectionFactory(rabbit.uri());
            viaProxy.setHost("127.0.0.1");
            viaProxy.setPort(proxy.port());
            viaProxy.setConnectionTimeout(1000);
            viaProxy.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
            viaProxy.setPublisherReturns(true);
            proxy.cut();
            Instant recorded = Instant.now();
            for (int i = 0; i < 20; i++) {
                String student = "s" + i;
                ops.add(outbox.record(student, seq -> Operation.delete(student, seq)));
            }
            try (OutboxRelay relay = OutboxRelay.start(entries, ConfirmingPublisher.toQueue(viaProxy, queue,
                    PublisherOptions.ofDefaults().withMaxAttempts(1).withConfirmTimeout(Duration.ofMillis(500))),
                    RelayOptions.ofDefaults().withClaimTtl(Duration.ofMillis(300))
                            .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(300))))) {
                Awaitility.await("claimed again and again while the broker is away").atMost(BOUND)
                        .until(() -> relay.state() == OutboxRelay.State.BACKING_OFF && entries.countDocuments(
                                new BsonDocument("tries", new BsonDocument("$gte", new org.bson.BsonInt32(3)))) == 20);
                assertThat(outbox.parked().count()).as("the broker's absence is nobody's fault").isZero();
                String problem = relay.problem().orElseThrow();
                proxy.restore();
                Awaitility.await("drained once it is back").atMost(BOUND)
                        .until(() -> entries.countDocuments() == 0 && relay.state() == OutboxRelay.State.RUNNING);
                row("broker away longer than the claim ttl (300 ms)", "published once it is back",
                        Duration.between(recorded, Instant.now()), problem);
            } finally {
                viaProxy.destroy();
            }
        }
        assertThat(receive(cf, queue)).hasSameElementsAs(ops);
    }

    @Test
    void a_claim_that_landed_but_whose_reply_was_lost_is_handed_back_at_once_not_after_its_claim_ttl(
            MongoBackend backend, MongoClient admin, MongoDatabase db, ConnectionFactory cf) {
        Optional<String> unavailable = FailPoint.unavailable(admin, FailPoint.CLOSE_AFTER);
        Assumptions.assumeTrue(unavailable.isEmpty(), () -> unavailable.orElse(""));
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_claim_lost", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(7), OutboxOptions.ofDefaults());
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String student = "s" + i;
            ops.add(outbox.record(student, seq -> Operation.delete(student, seq)));
        }
        String app = "relay-claim-lost-" + System.nanoTime();
        try (MongoClient relayClient = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString())).applicationName(app).build());
             FailPoint lost = FailPoint.closeAfter(admin, 1, FailPoint.Data.failing("update").forApp(app)
                     .onNamespace(db.getName() + ".outbox_claim_lost"))) {
            Instant started = Instant.now();
            // a claim ttl no test waits out: the entries come back only if the relay hands its claim back
            try (OutboxRelay relay = OutboxRelay.start(relayClient.getDatabase(db.getName())
                            .getCollection("outbox_claim_lost", BsonDocument.class), ConfirmingPublisher.toQueue(cf, queue, PublisherOptions.ofDefaults()),
                    RelayOptions.ofDefaults().withClaimTtl(Duration.ofMinutes(10))
                            .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(300))))) {
                lost.awaitEntered(1, BOUND);   // the claim landed, its connection closed before the reply
                Awaitility.await("published although the claim's reply was lost").atMost(BOUND)
                        .until(() -> entries.countDocuments() == 0 && relay.published() >= 20);
                row("a claim applied, its reply lost (claim ttl 10 min)", "handed back, published",
                        Duration.between(started, Instant.now()), "the claim's connection closed after it ran");
            }
        }
        assertThat(receive(cf, queue)).hasSameElementsAs(ops);
    }

    @Test
    void a_letter_the_broker_dead_lettered_at_its_delivery_limit_is_replayed_by_the_time_in_its_x_death(
            RabbitBackend rabbit, ConnectionFactory cf) throws Exception {
        String work = RabbitExtension.uniqueQueue("edges-limit");
        String dlq = work + ".dlq";
        RabbitAdmin admin = new RabbitAdmin(cf);
        admin.declareQueue(new Queue(dlq, true, false, false));
        Instant started = Instant.now();
        String how;
        try (var connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            byte[] body = envelope.encode(Operation.delete("s1", 7));
            if (rabbit.isRabbitMq()) {
                admin.declareQueue(QueueBuilder.durable(work).quorum().deliveryLimit(1).deadLetterExchange("")
                        .deadLetterRoutingKey(dlq).build());
                channel.basicPublish("", work, null, body);
                // consumers that crash mid-message: each delivery handed back, until the broker gives up on it
                Awaitility.await("dead-lettered by the broker").atMost(BOUND).until(() -> {
                    GetResponse delivery = channel.basicGet(work, false);
                    if (delivery != null) {
                        channel.basicNack(delivery.getEnvelope().getDeliveryTag(), false, true);
                    }
                    return admin.getQueueInfo(dlq).getMessageCount() == 1;
                });
                how = "RabbitMQ's delivery limit";
            } else {   // the embedded broker dead-letters nothing itself: the letter as RabbitMQ would leave it
                admin.declareQueue(new Queue(work, true, false, false));
                Map<String, Object> death = new HashMap<>(Map.of("reason", "delivery_limit", "queue", work,
                        "time", new Date(), "count", 1L));
                channel.basicPublish("", dlq, new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                        .headers(Map.of("x-death", List.of(death))).build(), body);
                Awaitility.await().atMost(BOUND).until(() -> admin.getQueueInfo(dlq).getMessageCount() == 1);
                how = "an x-death written as RabbitMQ does (the embedded broker has no delivery limit)";
            }
        }
        DeadLetterQueue letters = DeadLetterQueue.of(cf, work, dlq);
        assertThat(letters.list(10)).singleElement().satisfies(group -> {
            assertThat(group.kind()).isEqualTo(DeadLetterQueue.UNKNOWN_KIND);
            assertThat(group.reason()).contains("dead-lettered by RabbitMQ: delivery_limit");
        });
        DeadLetterQueue.Replay replay = letters.replay(Optional.empty(), 10, Duration.ofDays(1), Clock.systemUTC());
        assertThat(replay.replayed()).isEqualTo(1);
        assertThat(receive(cf, work)).containsExactly(Operation.delete("s1", 7));
        admin.deleteQueue(dlq);
        row("letter dead-lettered by the broker at its limit", "replayed (age from x-death)",
                Duration.between(started, Instant.now()), how);
    }

    /** An observation registry whose one handler does {@code onStart} to every send. */
    private static ObservationRegistry registry(java.util.function.Consumer<SenderContext<Object>> onStart) {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<SenderContext<Object>>() {
            @Override
            public void onStart(SenderContext<Object> context) {
                onStart.accept(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return context instanceof SenderContext;
            }
        });
        return registry;
    }

    private static String entity(Observation.Context context) {
        var value = context.getHighCardinalityKeyValue("orderless.entity");
        return value == null ? "" : value.getValue();
    }

    private static String queue(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("edges");
        new RabbitAdmin(cf).declareQueue(new Queue(queue, true, false, false));
        return queue;
    }

    /** Every message in the queue (drained, then the queue deleted), decoded. */
    private List<Operation> receive(ConnectionFactory cf, String queue) {
        List<Operation> received = new ArrayList<>();
        try (var connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            for (GetResponse m = channel.basicGet(queue, true); m != null; m = channel.basicGet(queue, true)) {
                received.add(envelope.decode(m.getBody()));
            }
        } catch (Exception e) {
            throw new AssertionError("reading '" + queue + "': " + e, e);
        }
        new RabbitAdmin(cf).deleteQueue(queue);
        return received;
    }
}
