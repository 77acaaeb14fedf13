package dev.orderless.testing.kafka;

import static dev.orderless.testing.kafka.Clients.accept;
import static dev.orderless.testing.kafka.Clients.consumer;
import static dev.orderless.testing.kafka.Clients.pollUntil;
import static dev.orderless.testing.kafka.Clients.produce;
import static dev.orderless.testing.kafka.Clients.unique;
import static dev.orderless.testing.kafka.Clients.value;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("kafka")
class KafkaProcessTest {

    @Test
    void a_killed_kafka_process_comes_back_with_start_again_and_its_records_are_there() throws Exception {
        try (KafkaProcess kafka = KafkaProcess.start()) {
            String topic = unique("topic");
            String group = unique("group");
            KafkaTopics.create(kafka.bootstrapServers(), topic, 1);
            KafkaTopics.shareGroupFromEarliest(kafka.bootstrapServers(), group);
            produce(kafka.bootstrapServers(), topic, "before the kill");
            long pid = kafka.pid();

            kafka.kill();
            assertThat(kafka.isAlive()).isFalse();
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(java.util.Optional.of(true));
            kafka.startAgain();

            assertThat(kafka.pid()).isNotEqualTo(pid);
            try (KafkaShareConsumer<String, String> consumer = consumer(kafka.bootstrapServers(), group, topic)) {
                List<ConsumerRecord<String, String>> received = pollUntil(consumer, value("before the kill"),
                        AcknowledgeType.ACCEPT, Duration.ofSeconds(60));
                assertThat(received).extracting(ConsumerRecord::value).containsExactly("before the kill");
                accept(consumer, received.get(0));
            }
        }
    }

    @Test
    void a_closed_kafka_process_is_gone_with_its_directory() {
        KafkaProcess kafka = KafkaProcess.start(KafkaSettings.ofDefaults().withDefaultPartitions(2));
        long pid = kafka.pid();
        java.nio.file.Path log = kafka.logFile();
        kafka.close();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(java.util.Optional.of(true));
        assertThat(log.getParent()).doesNotExist();
    }
}
