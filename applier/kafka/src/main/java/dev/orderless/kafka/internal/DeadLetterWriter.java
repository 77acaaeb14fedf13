package dev.orderless.kafka.internal;

import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.consume.internal.LetterSubject;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Writes a poison record to the dead-letter topic and returns once Kafka acknowledged it ({@code acks=all},
 * idempotent): the same key and value, the record's own headers, and orderless's dead-letter headers (the reason, its
 * kind, the entity and seq where known, the topic it came from, when it was first dead-lettered). Shared by the
 * consumer's threads (a Kafka producer is thread-safe).
 */
public final class DeadLetterWriter implements AutoCloseable {
    private final Producer<byte[], byte[]> producer;
    private final String topic;
    private final String deadLetterTopic;
    private final Duration timeout;
    private final Clock clock;

    public DeadLetterWriter(Producer<byte[], byte[]> producer, String topic, String deadLetterTopic, Duration timeout,
                            Clock clock) {
        this.producer = producer;
        this.topic = topic;
        this.deadLetterTopic = deadLetterTopic;
        this.timeout = timeout;
        this.clock = clock;
    }

    /**
     * Connects to the dead-letter topic's leader before the first letter: a first send that has to look the topic up
     * takes seconds on a busy machine, while the records of its poll wait under their acquisition lock.
     */
    public void warmUp() {
        producer.partitionsFor(deadLetterTopic);
    }

    /**
     * Writes {@code record} to the dead-letter topic with its reason.
     *
     * @throws RuntimeException if Kafka did not acknowledge it within the timeout (the record is then held, not lost)
     */
    public void write(ConsumerRecord<byte[], byte[]> record, String kind, String reason, LetterSubject subject) {
        RecordHeaders headers = new RecordHeaders();
        for (Header header : record.headers()) {
            if (!header.key().startsWith("x-orderless-")) {
                headers.add(header);
            }
        }
        Header carried = record.headers().lastHeader(DeadLetterFields.DEAD_LETTERED_AT);
        String at = DeadLetterFields.deadLetteredAt(carried == null ? null
                : new String(carried.value(), StandardCharsets.UTF_8), clock.instant()).toString();
        add(headers, DeadLetterFields.REASON, DeadLetterFields.shortReason(reason));
        add(headers, DeadLetterFields.REASON_KIND, kind);
        add(headers, DeadLetterFields.ORIGINAL_QUEUE, topic);
        add(headers, DeadLetterFields.DEAD_LETTERED_AT, at);
        subject.entity().ifPresent(entity -> add(headers, DeadLetterFields.ENTITY, entity));
        subject.seq().ifPresent(seq -> add(headers, DeadLetterFields.SEQ, Long.toString(seq)));
        try {
            producer.send(new ProducerRecord<>(deadLetterTopic, null, record.key(), record.value(), headers))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted writing to the dead-letter topic '" + deadLetterTopic + "'", e);
        } catch (Exception e) {
            throw new IllegalStateException("the dead-letter topic '" + deadLetterTopic + "' did not take the letter"
                    + " within " + timeout.toSeconds() + " s: " + e, e);
        }
    }

    private static void add(RecordHeaders headers, String name, String value) {
        headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }
}
