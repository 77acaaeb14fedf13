package dev.orderless.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.message.Envelope;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.stamp.HybridLogicalClock;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import dev.orderless.testing.TcpProxy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * The outbox and its relays against the real (or embedded) broker and MongoDB: what {@code record}
 * stores is published at least once, whatever the broker does meanwhile, and removed only after its
 * confirm; a full outbox refuses with back-pressure; an entry that can never be published is parked.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OutboxRelayTest {
    private final Envelope envelope = new Envelope();

    @Test
    void every_recorded_action_is_published_and_removed_from_the_outbox(MongoDatabase db, ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_all", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, MongoCounterStamper.create(db.getCollection("c1", BsonDocument.class)),
                OutboxOptions.ofDefaults());
        List<Operation> recorded = record(outbox, 300);
        try (OutboxRelay relay = OutboxRelay.start(entries, publisher(cf, queue), RelayOptions.ofDefaults().withBatch(50))) {
            // a batch is removed, then counted: wait for both
            Awaitility.await("the outbox drained").atMost(Duration.ofSeconds(30))
                    .until(() -> entries.countDocuments() == 0 && relay.published() >= 300);
            assertThat(relay.published()).isEqualTo(300);
        }
        assertThat(received(cf, queue)).containsExactlyInAnyOrderElementsOf(recorded);
    }

    @Test
    void while_the_broker_is_unreachable_actions_are_recorded_and_published_once_it_is_back(
            MongoDatabase db, RabbitBackend rabbit, ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_cut", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(3), OutboxOptions.ofDefaults());
        try (TcpProxy proxy = TcpProxy.start(rabbit.uri().getHost(), rabbit.uri().getPort())) {
            CachingConnectionFactory viaProxy = factory(rabbit, proxy);
            proxy.cut();
            try (OutboxRelay relay = OutboxRelay.start(entries, ConfirmingPublisher.toQueue(viaProxy, queue,
                    PublisherOptions.ofDefaults().withMaxAttempts(1).withConfirmTimeout(Duration.ofSeconds(2))),
                    RelayOptions.ofDefaults().withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500))))) {
                List<Operation> recorded = record(outbox, 200);
                Awaitility.await("the relay backs off, saying why").atMost(Duration.ofSeconds(30))
                        .until(() -> relay.state() == OutboxRelay.State.BACKING_OFF);
                assertThat(relay.problem()).hasValueSatisfying(p -> assertThat(p).contains("RabbitMQ did not take"));
                assertThat(entries.countDocuments()).isEqualTo(200);

                proxy.restore();
                Awaitility.await("drained once the broker is back").atMost(Duration.ofSeconds(60))
                        .until(() -> entries.countDocuments() == 0 && relay.state() == OutboxRelay.State.RUNNING);
                assertThat(received(cf, queue)).containsAll(recorded).hasSameElementsAs(recorded);
            } finally {
                viaProxy.destroy();
            }
        }
    }

    @Test
    void two_relays_at_once_publish_every_entry_and_claim_them_apart(MongoDatabase db, ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_two", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(4), OutboxOptions.ofDefaults());
        List<Operation> recorded = record(outbox, 2000);
        try (OutboxRelay a = OutboxRelay.start(entries, publisher(cf, queue), RelayOptions.ofDefaults().withBatch(100)
                .withOwner("a"));
             OutboxRelay b = OutboxRelay.start(entries, publisher(cf, queue), RelayOptions.ofDefaults().withBatch(100)
                     .withOwner("b"))) {
            Awaitility.await("the outbox drained").atMost(Duration.ofSeconds(60))
                    .until(() -> entries.countDocuments() == 0 && a.published() + b.published() >= 2000);
            assertThat(a.published() + b.published()).as("claims keep the relays apart").isEqualTo(2000);
        }
        assertThat(received(cf, queue)).hasSameElementsAs(recorded).hasSize(2000);
    }

    @Test
    void a_full_outbox_refuses_the_action_with_back_pressure_and_stamps_nothing(MongoDatabase db) {
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_full", BsonDocument.class);
        MongoCollection<BsonDocument> counters = db.getCollection("c5", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, MongoCounterStamper.create(counters),
                OutboxOptions.ofDefaults().withMaxBacklog(10).withBacklogCheck(Duration.ofMinutes(1)));
        record(outbox, 10);
        assertThatThrownBy(() -> outbox.record("newcomer", seq -> Operation.delete("newcomer", seq)))
                .isInstanceOf(OutboxFullException.class)
                .hasMessageContaining("outbox 'outbox_full' is full (10 entries waiting, limit 10)")
                .hasMessageContaining("check that RabbitMQ is up");
        assertThat(entries.countDocuments()).isEqualTo(10);
        assertThat(counters.find(new BsonDocument("_id", new BsonString("newcomer"))).first())
                .as("nothing stamped for the refused action").isNull();
    }

    @Test
    void an_entry_that_is_not_an_operation_is_parked_with_its_reason_and_the_rest_published(
            MongoDatabase db, ConnectionFactory cf) {
        String queue = queue(cf);
        MongoCollection<BsonDocument> entries = db.getCollection("outbox_bad", BsonDocument.class);
        Outbox outbox = Outbox.create(entries, HybridLogicalClock.create(6), OutboxOptions.ofDefaults());
        List<Operation> recorded = record(outbox, 20);
        entries.insertOne(new BsonDocument("_id", new BsonObjectId(new ObjectId())).append("entity", new BsonString("x"))
                .append("body", new BsonBinary("{not json".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .append("due", new BsonDateTime(0)));
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (OutboxRelay relay = OutboxRelay.start(entries, publisher(cf, queue), RelayOptions.ofDefaults().withMeters(meters))) {
            Awaitility.await("the good ones published, the bad one parked").atMost(Duration.ofSeconds(30))
                    .until(() -> entries.countDocuments() == 1 && meters.counter("orderless.outbox.parked", "outbox",
                            "outbox_bad").count() == 1);
            assertThat(relay.state()).isEqualTo(OutboxRelay.State.RUNNING);
        }
        assertThat(entries.find().first().getString("error").getValue()).startsWith("not an operation");
        assertThat(received(cf, queue)).hasSameElementsAs(recorded);
    }

    @Test
    void an_idle_relay_asks_the_change_stream_for_news_at_most_about_twice_a_second(MongoBackend backend,
                                                                                    ConnectionFactory cf) {
        AtomicInteger polls = new AtomicInteger();
        CommandListener listener = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommandName().equals("getMore")) {
                    polls.incrementAndGet();
                }
            }
        };
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(backend.connectionString())).addCommandListener(listener)
                .build())) {
            MongoCollection<BsonDocument> entries = client.getDatabase(MongoBackend.freshDatabaseName("idle"))
                    .getCollection("outbox_idle", BsonDocument.class);
            try (OutboxRelay relay = OutboxRelay.start(entries, publisher(cf, queue(cf)), RelayOptions.ofDefaults())) {
                Awaitility.await("the watch polls").atMost(Duration.ofSeconds(10)).until(() -> polls.get() > 0);
                int before = polls.get();
                // a window of idle time, measured: the embedded server answers an empty poll at once, so a
                // watcher that does not wait itself would poll thousands of times in it
                Awaitility.await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> true);
                assertThat(polls.get() - before).as("polls in 2 s of idle").isLessThan(20);
                assertThat(relay.state()).isEqualTo(OutboxRelay.State.RUNNING);
            } finally {
                entries.drop();
            }
        }
    }

    @Test
    void a_batch_larger_than_the_publishers_window_is_refused_at_start(MongoDatabase db, ConnectionFactory cf) {
        assertThatThrownBy(() -> OutboxRelay.start(db.getCollection("outbox_cfg", BsonDocument.class),
                ConfirmingPublisher.toQueue(cf, "q", PublisherOptions.ofDefaults().withWindow(10)),
                RelayOptions.ofDefaults().withBatch(11)))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("outbox relay: batch (11) must not exceed the publisher's window (10)");
    }

    private static List<Operation> record(Outbox outbox, int count) {
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String student = "s" + (i % 37);
            ops.add(outbox.record(student, seq -> Operation.add(student, seq, "classes", "C" + (seq % 5))));
        }
        return ops;
    }

    private static String queue(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("outbox");
        new RabbitAdmin(cf).declareQueue(new Queue(queue, true, false, false));
        return queue;
    }

    private static ConfirmingPublisher publisher(ConnectionFactory cf, String queue) {
        return ConfirmingPublisher.toQueue(cf, queue, PublisherOptions.ofDefaults());
    }

    private static CachingConnectionFactory factory(RabbitBackend rabbit, TcpProxy proxy) {
        CachingConnectionFactory factory = new CachingConnectionFactory(rabbit.uri());
        factory.setPort(proxy.port());
        factory.setHost("127.0.0.1");
        factory.setConnectionTimeout(1000);
        factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        factory.setPublisherReturns(true);
        return factory;
    }

    /** Every message in the queue (drained), decoded; duplicates kept. */
    private List<Operation> received(ConnectionFactory cf, String queue) {
        RabbitTemplate template = new RabbitTemplate(cf);
        List<Operation> received = new ArrayList<>();
        for (Message m = template.receive(queue, 2000); m != null; m = template.receive(queue, 500)) {
            received.add(envelope.decode(m.getBody()));
        }
        new RabbitAdmin(cf).deleteQueue(queue);
        Set<Operation> distinct = new HashSet<>(received);
        assertThat(distinct).as("published at least once").hasSizeLessThanOrEqualTo(received.size());
        return received;
    }
}
