package dev.orderless.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.kafka.EmbeddedKafka;
import dev.orderless.testing.kafka.KafkaSettings;
import dev.orderless.testing.kafka.KafkaTopics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The share-group consumer on a real Kafka broker (KRaft, in the JVM) and the embedded MongoDB behind a proxy that can
 * cut it: any order and duplicates converge, poison reaches the dead-letter topic with its reason, an outage longer than
 * the acquisition lock loses nothing and spends no delivery, a record on its last delivery is dead-lettered rather than
 * left for the broker to drop.
 */
@Tag("kafka")
@ExtendWith(MongoExtension.class)
class ShareGroupConsumerTest {
    /**
     * The broker's lock: long enough that a poll's acknowledgements arrive within it on a busy machine (a record whose
     * lock expires first is delivered again: a duplicate, absorbed, but not what these tests count).
     */
    private static final Duration LOCK = Duration.ofSeconds(15);
    /** The outage test's group: short, so that the outage outlasts it several times over. */
    private static final Duration SHORT_LOCK = Duration.ofSeconds(3);
    private static final int DELIVERY_LIMIT = 4;
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

    @Test
    void shuffled_and_duplicated_operations_taken_by_four_consumers_converge_and_each_record_is_accepted_once() {
        Random random = new Random(Long.getLong("orderless.seed", 53));
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(random, 1500, 1500, 60), "k");
        List<Operation> delivered = Histories.delivery(history, 0.2, random);
        ShareConsumerOptions options = world.declared("converge", 4).withConcurrency(4);

        world.publisher(options).publishAll(delivered);
        ShareGroupConsumer consumer = world.start(options);

        world.awaitSettled(delivered.size());
        // at least once: a record whose acknowledgement missed its lock comes again, and is found a duplicate
        assertThat(world.accepted()).as("each record accepted").isGreaterThanOrEqualTo(delivered.size());
        assertThat(world.deadLettered()).isZero();
        assertConverged(history);
        assertThat(consumer.isRunning()).isTrue();
        assertThat(consumer.deliveryCountLimit()).as("read from the broker").isEqualTo(DELIVERY_LIMIT);
    }

    @Test
    void poison_goes_to_the_dead_letter_topic_with_its_reason_and_entity_and_is_replayed_once() {
        ShareConsumerOptions options = world.declared("poison", 1);
        List<Operation> good = Histories.operations(Histories.stepsOfAllTypes(new Random(3), 100, 100, 5), "p");
        KafkaOperationPublisher publisher = world.publisher(options);
        publisher.publishRaw(List.of("not json".getBytes(StandardCharsets.UTF_8),
                "{\"entity\":\"poison-1\",\"seq\":7,\"op\":\"add\",\"field\":\"nope\",\"element\":\"x\"}"
                        .getBytes(StandardCharsets.UTF_8)));
        publisher.publishAll(good);
        world.start(options);

        world.awaitSettled(good.size() + 2);
        assertThat(world.deadLettered()).isEqualTo(2);
        assertConverged(good);
        DeadLetterTopic letters = new DeadLetterTopic(world.kafka(), options.deadLetterTopic());
        List<KafkaDeadLetter> peeked = letters.peek(10);
        assertThat(peeked).extracting(KafkaDeadLetter::kind).containsExactlyInAnyOrder("bad_input", "unknown_field");
        assertThat(peeked).filteredOn(l -> l.kind().equals("unknown_field")).singleElement().satisfies(letter -> {
            assertThat(letter.entity()).contains("poison-1");
            assertThat(letter.seq()).hasValue(7);
            assertThat(letter.reason()).contains("nope");
        });

        assertThat(letters.replay(options.topic())).isEqualTo(2);
        world.awaitSettled(good.size() + 4);   // still poison: dead-lettered again
        // the two written again; the two replayed are not listed, nor replayed, again
        assertThat(letters.peek(10)).as("only the letters not replayed yet").hasSize(2)
                .allSatisfy(letter -> assertThat(letter.offset()).isGreaterThanOrEqualTo(2));
    }

    @Test
    void an_outage_longer_than_the_acquisition_lock_holds_the_records_and_spends_no_delivery() {
        ShareConsumerOptions options = world.declared("outage", 2).withConcurrency(2).withMaxHold(Duration.ofSeconds(1));
        KafkaTopics.shareGroupLockDuration(broker.bootstrapServers(), options.group(), SHORT_LOCK);
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(new Random(5), 300, 300, 20), "o");
        world.proxy.cut();
        world.publisher(options).publishAll(history);
        ShareGroupConsumer consumer = world.start(options);

        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> consumer.waitingFor().isPresent());
        assertThat(consumer.waitingFor().orElseThrow()).startsWith("MongoDB: ");
        // several locks and more deliveries than the limit would allow, were the records released each time
        Awaitility.await("nothing settled for 3 locks while MongoDB is gone")
                .during(SHORT_LOCK.multipliedBy(3)).atMost(SHORT_LOCK.multipliedBy(3).plusSeconds(10))
                .until(() -> world.accepted() + world.deadLettered() == 0);
        assertThat(consumer.retrying()).isPositive();
        world.proxy.restore();

        world.awaitSettled(history.size());
        assertThat(world.deadLettered()).as("an outage dead-letters nothing").isZero();
        assertThat(KafkaTopics.count(broker.bootstrapServers(), options.deadLetterTopic())).isZero();
        assertConverged(history);
        assertThat(consumer.waitingFor()).isEmpty();
    }

    @Test
    void a_record_on_its_last_delivery_that_mongodb_cannot_take_is_dead_lettered_not_left_to_the_broker() {
        ShareConsumerOptions options = world.declared("last", 1);
        Operation op = Histories.operations(Histories.steps(new Random(9), 1, 1, 1), "l").get(0);
        world.publisher(options).publish(op);
        // two deliveries released by another member of the group: the next one is the last
        try (KafkaShareConsumer<byte[], byte[]> other = new KafkaShareConsumer<>(
                ShareGroupConsumer.consumerProperties(world.kafka(), options))) {
            other.subscribe(List.of(options.topic()));
            for (int delivery = 1; delivery < DELIVERY_LIMIT; delivery++) {
                List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                    other.poll(Duration.ofMillis(200)).forEach(got::add);
                    return !got.isEmpty();
                });
                got.forEach(record -> other.acknowledge(record, AcknowledgeType.RELEASE));
                other.commitSync();
            }
        }
        world.proxy.cut();
        world.start(options);

        world.awaitSettled(1);
        KafkaDeadLetter letter = new DeadLetterTopic(world.kafka(), options.deadLetterTopic()).peek(1).get(0);
        assertThat(letter.kind()).isEqualTo("delivery_limit");
        assertThat(letter.entity()).contains(op.entity());
        assertThat(letter.reason()).contains("last delivery (" + DELIVERY_LIMIT);
        world.proxy.restore();
    }

    @Test
    void closing_hands_back_what_it_holds_and_another_consumer_applies_it() {
        ShareConsumerOptions options = world.declared("close", 1).withBackoff(Backoff.of(Duration.ofMillis(200), Duration.ofMillis(500)));
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(new Random(13), 40, 40, 4), "c");
        world.proxy.cut();
        world.publisher(options).publishAll(history);
        ShareGroupConsumer first = world.start(options);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> first.retrying() > 0);

        first.close();

        assertThat(first.isRunning()).isFalse();
        assertThat(first.retrying()).as("none retried once handed back").isZero();
        assertThat(world.accepted() + world.deadLettered()).isZero();
        world.proxy.restore();
        world.start(options);
        world.awaitSettled(history.size());
        assertThat(world.deadLettered()).isZero();
        assertConverged(history);
    }

    @Test
    void a_stamped_publish_is_keyed_by_its_entity_and_applied_with_the_stamped_seq() {
        ShareConsumerOptions options = world.declared("stamped", 1);
        Operation published = world.publisher(options).publish(entity -> 41, "stamped-1",
                seq -> Operation.add("stamped-1", seq, "classes", "CS 101"));
        world.start(options);

        world.awaitSettled(1);
        assertThat(published.seq()).isEqualTo(41);
        assertConverged(List.of(published));
        try (KafkaShareConsumer<byte[], byte[]> reader = new KafkaShareConsumer<>(ShareGroupConsumer.consumerProperties(
                world.kafka(), ShareConsumerOptions.ofDefaults(options.topic(), options.group() + ".reader")))) {
            KafkaTopics.shareGroupFromEarliest(broker.bootstrapServers(), options.group() + ".reader");
            reader.subscribe(List.of(options.topic()));
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                reader.poll(Duration.ofMillis(200)).forEach(got::add);
                return !got.isEmpty();
            });
            assertThat(new String(got.get(0).key(), StandardCharsets.UTF_8)).isEqualTo("stamped-1");
            got.forEach(record -> reader.acknowledge(record, AcknowledgeType.ACCEPT));
        }
    }

    @Test
    void start_fails_naming_a_topic_that_does_not_exist() {
        ShareConsumerOptions options = ShareConsumerOptions.ofDefaults("orderless.test.missing." + NAMES.incrementAndGet(),
                "missing");
        assertThatThrownBy(() -> ShareGroupConsumer.builder(world.kafka(), world.applier).options(options).start())
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("topic '" + options.topic() + "' does not exist")
                .hasMessageContaining("KafkaTopology.declare");
    }

    private void assertConverged(List<Operation> history) {
        Map<String, EntityState> expected = new ReferenceModel(Histories.ALL_TYPES).replay(history);
        Map<String, EntityState> stored = EntityState.readAll(world.collection.find(), Histories.ALL_TYPES);
        assertThat(ReferenceModel.diverged(expected, stored)).as("diverged documents").isEmpty();
        assertThat(stored).isEqualTo(expected);
    }
}
