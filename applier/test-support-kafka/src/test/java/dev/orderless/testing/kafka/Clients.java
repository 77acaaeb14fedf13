package dev.orderless.testing.kafka;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** The tests' Kafka clients: a producer that waits for each record, share consumers in explicit mode. */
final class Clients {
    private Clients() {
    }

    static String unique(String prefix) {
        return "orderless.test." + prefix + "." + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Produces {@code values} to {@code topic}, each acknowledged by the broker before this returns. */
    static void produce(String bootstrap, String topic, String... values) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap,
                "acks", "all", "delivery.timeout.ms", 30_000, "request.timeout.ms", 10_000),
                new StringSerializer(), new StringSerializer())) {
            for (String value : values) {
                producer.send(new ProducerRecord<>(topic, value, value)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** A share consumer of {@code group} on {@code topic} that acknowledges explicitly. */
    static KafkaShareConsumer<String, String> consumer(String bootstrap, String group, String topic) {
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(Map.of("bootstrap.servers", bootstrap,
                "group.id", group, "share.acknowledgement.mode", "explicit"),
                new StringDeserializer(), new StringDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /**
     * Polls until a record matching {@code last} arrives, acknowledging every record with {@code type} except that
     * one, which is left unacknowledged (the caller acknowledges it, or not); returns all received.
     */
    static List<ConsumerRecord<String, String>> pollUntil(KafkaShareConsumer<String, String> consumer,
            Predicate<ConsumerRecord<String, String>> last, AcknowledgeType type, Duration timeout) {
        List<ConsumerRecord<String, String>> received = new ArrayList<>();
        // in the same thread: a share consumer must not be used by two threads, and Awaitility's own thread could
        // still be polling when a timed-out test closes it
        await().atMost(timeout).pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                .until(() -> {
                    boolean found = false;
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                        received.add(record);
                        if (!found && last.test(record)) {
                            found = true;
                        } else {
                            consumer.acknowledge(record, type);
                        }
                    }
                    return found;
                });
        return received;
    }

    /** Accepts {@code record} and commits the acknowledgement. */
    static void accept(KafkaShareConsumer<String, String> consumer, ConsumerRecord<String, String> record) {
        consumer.acknowledge(record, AcknowledgeType.ACCEPT);
        consumer.commitSync();
    }

    static Predicate<ConsumerRecord<String, String>> value(String value) {
        return r -> r.value().equals(value);
    }
}
