package dev.orderless.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.kafka.EmbeddedKafka;
import dev.orderless.testing.kafka.KafkaSettings;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a review of the share-group consumer found (issue 53), each pinned by a test that failed before its fix. A
 * broker of its own with a short lock (3 s) and the smallest delivery limit (2), so that a record whose lock
 * expires once reaches its last delivery.
 */
@Tag("kafka")
@ExtendWith(MongoExtension.class)
class ShareGroupReviewTest {
    private static final Duration LOCK = Duration.ofSeconds(3);
    private static final int DELIVERY_LIMIT = 2;
    private static final AtomicInteger NAMES = new AtomicInteger();

    private static EmbeddedKafka broker;

    private ShareGroupFixture world;

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
        world = new ShareGroupFixture(broker, backend, fresh);
    }

    @AfterEach
    void close() throws Exception {
        world.close();
    }

    /**
     * An outage spends no delivery. The consumer tried each record of a failed poll once more at once, one after
     * another, renewing their locks only after the whole poll; with MongoDB cut each try waited for server selection
     * (1 s here, 30 s by the driver's default), so a poll of 20 outlasted the lock, the broker delivered the records
     * again with their count spent, and on the last delivery they were dead-lettered though MongoDB was merely down.
     * Now a poll's failed records are held without another try, and while MongoDB is down none is tried.
     */
    @Test
    void a_poll_retried_record_by_record_in_an_outage_spends_no_delivery() {
        ShareConsumerOptions options = world.declared("serial", 1).withMaxPollRecords(20).withMaxHold(Duration.ofMinutes(5));
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(new Random(7), 20, 20, 20), "s");
        world.proxy.cut();
        world.publisher(options).publishAll(history);
        ShareGroupConsumer consumer = world.start(options);
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> consumer.waitingFor().isPresent());

        Awaitility.await("nothing dead-lettered while MongoDB is merely down")
                .during(LOCK.multipliedBy(8)).atMost(LOCK.multipliedBy(8).plusSeconds(30))
                .until(() -> world.deadLettered() == 0);
        world.proxy.restore();
    }

    /**
     * A letter replayed and dead-lettered again keeps its replay count, as RabbitMQ's DeadLetterHeaders does: the
     * writer dropped every x-orderless-* header, so the next replay said 1 again and a poison replayed for ever never
     * showed it.
     */
    @Test
    void a_replayed_letter_dead_lettered_again_keeps_its_replay_count() {
        ShareConsumerOptions options = world.declared("replaycount", 1);
        world.publisher(options).publishRaw(List.of("not json".getBytes(StandardCharsets.UTF_8)));
        world.start(options);
        DeadLetterTopic letters = new DeadLetterTopic(world.kafka(), options.deadLetterTopic());
        Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> world.deadLettered() >= 1);

        assertThat(letters.replay(options.topic())).isEqualTo(1);
        Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> world.deadLettered() >= 2);

        List<ConsumerRecord<byte[], byte[]>> written = readAll(options.deadLetterTopic(), 2);
        Header count = written.get(1).headers().lastHeader(DeadLetterFields.REPLAY_COUNT);
        assertThat(count).as("the second letter, of a record replayed once, says so").isNotNull();
        assertThat(new String(count.value(), StandardCharsets.UTF_8)).isEqualTo("1");
    }

    private List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int atLeast) {
        Map<String, Object> properties = new HashMap<>(world.kafka());
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
}
