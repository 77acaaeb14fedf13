package dev.orderless.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.kafka.EmbeddedKafka;
import dev.orderless.testing.kafka.KafkaSettings;
import dev.orderless.testing.kafka.KafkaTopics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Review of issue 53 (helper review1): defects of the share-group consumer, each shown by a test that fails on main.
 * A broker of its own with a short lock (3 s) and the smallest delivery limit (2), so that a record whose lock
 * expires once reaches its last delivery.
 */
@Tag("kafka")
@ExtendWith(MongoExtension.class)
class ShareGroupReviewTest {
    private static final Duration LOCK = Duration.ofSeconds(3);
    private static final int DELIVERY_LIMIT = 2;
    private static final AtomicInteger NAMES = new AtomicInteger();

    private static EmbeddedKafka broker;

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final List<AutoCloseable> opened = new ArrayList<>();
    private TcpProxy proxy;
    private MongoClient client;
    private GuardedApplier applier;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafka.start(KafkaSettings.ofDefaults().withRecordLockDuration(LOCK)
                .withDeliveryCountLimit(DELIVERY_LIMIT));
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @BeforeEach
    void connectThroughAProxy(MongoBackend backend, MongoDatabase fresh) {
        String[] target = new ConnectionString(backend.connectionString()).getHosts().get(0).split(":");
        proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
        client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port()
                + "/?directConnection=true&serverSelectionTimeoutMS=1000&connectTimeoutMS=1000&socketTimeoutMS=3000");
        MongoCollection<BsonDocument> collection = client.getDatabase(fresh.getName())
                .getCollection("entities", BsonDocument.class);
        applier = GuardedApplier.create(collection, Histories.ALL_TYPES);
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        client.close();
        proxy.close();
    }

    /**
     * DEAD-LETTERED IN AN OUTAGE (docs: "an outage of any length neither loses it nor spends the broker's delivery
     * count"). When a poll's bulk apply fails, ShareWorker tries each record once more at once, one after another, on
     * the polling thread, and only renews their locks after the whole poll (ShareWorker.handle's finally, the
     * commitSync in run). With MongoDB cut, each attempt waits for server selection (1 s here, 30 s by the driver's
     * default), so a poll of 20 takes far longer than the lock: the locks expire, the broker delivers the records
     * again with their delivery count spent, and on the last delivery they are dead-lettered though MongoDB was merely
     * down.
     */
    @Test
    void a_poll_retried_record_by_record_in_an_outage_spends_no_delivery() {
        ShareConsumerOptions options = declared("serial", 1).withMaxPollRecords(20).withMaxHold(Duration.ofMinutes(5));
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(new Random(7), 20, 20, 20), "s");
        proxy.cut();
        publisher(options).publishAll(history);
        ShareGroupConsumer consumer = start(options);
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> consumer.waitingFor().isPresent());

        Awaitility.await("nothing dead-lettered while MongoDB is merely down")
                .during(LOCK.multipliedBy(8)).atMost(LOCK.multipliedBy(8).plusSeconds(30))
                .until(() -> deadLettered() == 0);
        proxy.restore();
    }

    /**
     * WRONG COUNT. DeadLetterTopic.replay sends a letter back with x-orderless-replay-count one higher, but
     * DeadLetterWriter drops every x-orderless-* header of the record it dead-letters (keeping only the first
     * dead-lettered-at), so a replayed record that fails again is written without its replay count and the next replay
     * says 1 again: a poison replayed forever never shows it. RabbitMQ's DeadLetterHeaders keeps the count.
     */
    @Test
    void a_replayed_letter_dead_lettered_again_keeps_its_replay_count() {
        ShareConsumerOptions options = declared("replaycount", 1);
        publisher(options).publishRaw(List.of("not json".getBytes(StandardCharsets.UTF_8)));
        start(options);
        DeadLetterTopic letters = new DeadLetterTopic(kafka(), options.deadLetterTopic());
        Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> deadLettered() >= 1);

        assertThat(letters.replay(options.topic())).isEqualTo(1);
        Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> deadLettered() >= 2);

        List<ConsumerRecord<byte[], byte[]>> written = readAll(options.deadLetterTopic(), 2);
        Header count = written.get(1).headers().lastHeader(DeadLetterFields.REPLAY_COUNT);
        assertThat(count).as("the second letter, of a record replayed once, says so").isNotNull();
        assertThat(new String(count.value(), StandardCharsets.UTF_8)).isEqualTo("1");
    }

    private List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int atLeast) {
        Map<String, Object> properties = new HashMap<>(kafka());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, "review1-reader-" + NAMES.incrementAndGet());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(properties)) {
            reader.subscribe(List.of(topic));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                reader.poll(Duration.ofMillis(200)).forEach(got::add);
                return got.size() >= atLeast;
            });
        }
        return got;
    }

    private Map<String, Object> kafka() {
        return Map.of("bootstrap.servers", broker.bootstrapServers());
    }

    private ShareConsumerOptions declared(String name, int partitions) {
        String topic = "orderless.test.review1." + name + "." + NAMES.incrementAndGet();
        ShareConsumerOptions options = ShareConsumerOptions.ofDefaults(topic, topic + ".group")
                .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500)));
        KafkaTopology.declare(kafka(), options, partitions);
        return options;
    }

    private KafkaOperationPublisher publisher(ShareConsumerOptions options) {
        KafkaOperationPublisher publisher = KafkaOperationPublisher.start(kafka(), options.topic());
        opened.add(publisher);
        return publisher;
    }

    private ShareGroupConsumer start(ShareConsumerOptions options) {
        ShareGroupConsumer consumer = ShareGroupConsumer.builder(kafka(), applier).options(options).meters(meters).start();
        opened.add(0, consumer);
        return consumer;
    }

    private double deadLettered() {
        return meters.find("orderless.consume.dead_lettered").counters().stream().mapToDouble(Counter::count).sum();
    }

}
