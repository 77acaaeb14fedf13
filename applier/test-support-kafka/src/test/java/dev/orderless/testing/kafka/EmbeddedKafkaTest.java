package dev.orderless.testing.kafka;

import static dev.orderless.testing.kafka.Clients.accept;
import static dev.orderless.testing.kafka.Clients.consumer;
import static dev.orderless.testing.kafka.Clients.pollUntil;
import static dev.orderless.testing.kafka.Clients.produce;
import static dev.orderless.testing.kafka.Clients.unique;
import static dev.orderless.testing.kafka.Clients.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The embedded broker itself (not KAFKA_BOOTSTRAP's): share groups on it behave as the settings say. */
@Tag("kafka")
class EmbeddedKafkaTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void start() {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void close() {
        kafka.close();
    }

    private String topicWithEarliestGroup(String group) {
        String topic = unique("topic");
        KafkaTopics.create(kafka.bootstrapServers(), topic, 1);
        KafkaTopics.shareGroupFromEarliest(kafka.bootstrapServers(), group);
        return topic;
    }

    @Test
    void a_record_produced_is_received_by_a_share_consumer_of_a_group_set_from_earliest() throws Exception {
        String group = unique("group");
        String topic = topicWithEarliestGroup(group);
        produce(kafka.bootstrapServers(), topic, "one");
        try (KafkaShareConsumer<String, String> consumer = consumer(kafka.bootstrapServers(), group, topic)) {
            List<ConsumerRecord<String, String>> received = pollUntil(consumer, value("one"), AcknowledgeType.ACCEPT,
                    WAIT);
            assertThat(received).extracting(ConsumerRecord::value).containsExactly("one");
            assertThat(received.get(0).deliveryCount()).contains((short) 1);
            accept(consumer, received.get(0));
        }
    }

    @Test
    void a_record_held_by_a_consumer_closed_without_acknowledging_it_comes_back_to_another_consumer()
            throws Exception {
        String group = unique("group");
        String topic = topicWithEarliestGroup(group);
        produce(kafka.bootstrapServers(), topic, "held");
        try (KafkaShareConsumer<String, String> first = consumer(kafka.bootstrapServers(), group, topic)) {
            pollUntil(first, value("held"), AcknowledgeType.ACCEPT, WAIT);
        }
        try (KafkaShareConsumer<String, String> second = consumer(kafka.bootstrapServers(), group, topic)) {
            ConsumerRecord<String, String> again = last(pollUntil(second, value("held"), AcknowledgeType.ACCEPT,
                    WAIT));
            assertThat(again.deliveryCount()).contains((short) 2);
            accept(second, again);
        }
    }

    @Test
    void a_record_whose_consumer_stops_polling_comes_back_to_another_consumer_when_its_lock_times_out()
            throws Exception {
        String group = unique("group");
        String topic = topicWithEarliestGroup(group);
        produce(kafka.bootstrapServers(), topic, "stuck");
        // the first consumer stays a member (its heartbeats go on) but neither acknowledges nor polls again: only
        // the acquisition lock's timeout gives the record back
        try (KafkaShareConsumer<String, String> hung = consumer(kafka.bootstrapServers(), group, topic);
                KafkaShareConsumer<String, String> other = consumer(kafka.bootstrapServers(), group, topic)) {
            pollUntil(hung, value("stuck"), AcknowledgeType.ACCEPT, WAIT);
            ConsumerRecord<String, String> again = last(pollUntil(other, value("stuck"), AcknowledgeType.ACCEPT,
                    WAIT));
            assertThat(again.deliveryCount()).contains((short) 2);
            accept(other, again);
        }
    }

    @Test
    void a_record_released_delivery_count_limit_times_is_archived_and_never_delivered_again() throws Exception {
        String group = unique("group");
        String topic = topicWithEarliestGroup(group);
        int limit = kafka.settings().deliveryCountLimit();
        produce(kafka.bootstrapServers(), topic, "poison");
        try (KafkaShareConsumer<String, String> consumer = consumer(kafka.bootstrapServers(), group, topic)) {
            for (int delivery = 1; delivery <= limit; delivery++) {
                ConsumerRecord<String, String> poison = last(pollUntil(consumer, value("poison"),
                        AcknowledgeType.ACCEPT, WAIT));
                assertThat(poison.deliveryCount()).contains((short) delivery);
                consumer.acknowledge(poison, AcknowledgeType.RELEASE);
                consumer.commitSync();
            }
            // a record produced after it comes; had the poison been offered again, it would have come first
            produce(kafka.bootstrapServers(), topic, "next");
            List<ConsumerRecord<String, String>> received = pollUntil(consumer, value("next"), AcknowledgeType.ACCEPT,
                    WAIT);
            assertThat(received).extracting(ConsumerRecord::value).containsExactly("next");
            accept(consumer, received.get(0));
        }
    }

    @Test
    void after_a_restart_a_record_produced_before_is_received_and_the_share_group_goes_on_where_it_was()
            throws Exception {
        String group = unique("group");
        String topic = topicWithEarliestGroup(group);
        produce(kafka.bootstrapServers(), topic, "consumed");
        try (KafkaShareConsumer<String, String> consumer = consumer(kafka.bootstrapServers(), group, topic)) {
            ConsumerRecord<String, String> consumed = last(pollUntil(consumer, value("consumed"),
                    AcknowledgeType.ACCEPT, WAIT));
            accept(consumer, consumed);
        }
        produce(kafka.bootstrapServers(), topic, "kept");

        kafka.restart();

        try (KafkaShareConsumer<String, String> consumer = consumer(kafka.bootstrapServers(), group, topic)) {
            List<ConsumerRecord<String, String>> received = pollUntil(consumer, value("kept"), AcknowledgeType.ACCEPT,
                    WAIT);
            assertThat(received).extracting(ConsumerRecord::value).containsExactly("kept");
            accept(consumer, received.get(0));
        }
        assertThat(KafkaTopics.count(kafka.bootstrapServers(), topic)).isEqualTo(2);
    }

    @Test
    void topics_are_created_idempotently_counted_and_deleted() throws Exception {
        String topic = unique("topic");
        KafkaTopics.create(kafka.bootstrapServers(), topic, 3);
        KafkaTopics.create(kafka.bootstrapServers(), topic, 3);
        produce(kafka.bootstrapServers(), topic, "a", "b", "c", "d");
        assertThat(KafkaTopics.count(kafka.bootstrapServers(), topic)).isEqualTo(4);
        KafkaTopics.delete(kafka.bootstrapServers(), topic, unique("never-created"));
        assertThatThrownBy(() -> KafkaTopics.count(kafka.bootstrapServers(), topic))
                .hasMessageContaining(topic).hasMessageContaining("UnknownTopicOrPartition");
    }

    @Test
    void a_closed_broker_leaves_no_directory_and_cannot_be_started_again() {
        EmbeddedKafka other = EmbeddedKafka.start(KafkaSettings.ofDefaults().withDeliveryCountLimit(2));
        Path dir = other.directory();
        assertThat(dir).isDirectory();
        other.close();
        assertThat(Files.exists(dir)).isFalse();
        assertThatThrownBy(other::startAgain).hasMessageContaining("closed");
    }

    private static ConsumerRecord<String, String> last(List<ConsumerRecord<String, String>> records) {
        return records.get(records.size() - 1);
    }
}
