package dev.orderless.kafka;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.Operation;
import dev.orderless.consume.internal.LetterSubject;
import dev.orderless.message.Envelope;
import dev.orderless.stamp.Stamper;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Publishes operations to a topic as the canonical JSON envelope (the same bytes as on RabbitMQ), keyed by their
 * entity, with an idempotent producer ({@code acks=all}), and returns only once Kafka acknowledged every record. A
 * record Kafka did not take within the timeout fails the call naming how many were not taken; sending them again may
 * duplicate one Kafka took without saying so, which the seq makes harmless.
 */
public final class KafkaOperationPublisher implements AutoCloseable {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Producer<byte[], byte[]> producer;
    private final String topic;
    private final Envelope envelope = Envelope.ofDefaults();

    private KafkaOperationPublisher(Producer<byte[], byte[]> producer, String topic) {
        this.producer = producer;
        this.topic = topic;
    }

    /**
     * A publisher to {@code topic}.
     *
     * @param kafka the Kafka client properties ({@code bootstrap.servers} at least); serializers, {@code acks} and
     *              idempotence are the publisher's own
     * @param topic the topic the share-group consumer reads
     */
    public static KafkaOperationPublisher start(Map<String, Object> kafka, String topic) {
        if (kafka == null || !kafka.containsKey("bootstrap.servers")) {
            throw InvalidConfigurationException.refused("Kafka publisher", "bootstrap.servers",
                    "must be among the Kafka properties, e.g. Map.of(\"bootstrap.servers\", \"localhost:9092\")");
        }
        if (topic == null || topic.isBlank()) {
            throw InvalidConfigurationException.refused("Kafka publisher", "topic", "must be a topic name");
        }
        return new KafkaOperationPublisher(new KafkaProducer<>(ShareGroupConsumer.producerProperties(kafka)), topic);
    }

    /** Publishes one operation and returns once Kafka took it. */
    public void publish(Operation op) {
        publishAll(List.of(op));
    }

    /**
     * Stamps the next seq for {@code entity}, builds the operation with it, publishes it and returns once Kafka took
     * it: the stamping producer of a Kafka application ({@link Stamper}: a MongoDB counter per entity, or a hybrid
     * logical clock).
     *
     * @param stamper gives the operation its seq
     * @param entity  the entity, and the record's key
     * @param at      builds the operation for the stamped seq, e.g. {@code seq -> Operation.add(entity, seq, ...)}
     * @return the operation as published
     * @throws IllegalArgumentException if {@code at} built an operation for another entity or seq
     */
    public Operation publish(Stamper stamper, String entity, LongFunction<? extends Operation> at) {
        long seq = stamper.next(entity);
        Operation op = at.apply(seq);
        if (!op.entity().equals(entity) || op.seq() != seq) {
            throw new IllegalArgumentException("the operation must be for '" + entity + "' with the stamped seq " + seq
                    + ", was '" + op.entity() + "' seq " + op.seq());
        }
        publish(op);
        return op;
    }

    /** Publishes every operation (key: its entity) and returns once Kafka took all of them. */
    public void publishAll(List<? extends Operation> ops) {
        List<Future<RecordMetadata>> sent = new ArrayList<>(ops.size());
        for (Operation op : ops) {
            sent.add(producer.send(new ProducerRecord<>(topic, key(op.entity()), envelope.encode(op))));
        }
        await(sent);
    }

    /**
     * Publishes bodies exactly as given (for tools and tests: a demo that also sends bad input), keyed by the entity
     * they name where one can be read, with the same waiting.
     */
    public void publishRaw(List<byte[]> bodies) {
        List<Future<RecordMetadata>> sent = new ArrayList<>(bodies.size());
        for (byte[] body : bodies) {
            byte[] key = LetterSubject.peek(body).entity().map(KafkaOperationPublisher::key).orElse(null);
            sent.add(producer.send(new ProducerRecord<>(topic, key, body)));
        }
        await(sent);
    }

    private void await(List<Future<RecordMetadata>> sent) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        int failed = 0;
        Exception first = null;
        for (Future<RecordMetadata> future : sent) {
            try {
                future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                failed++;
                first = first == null ? e : first;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KafkaPublishException("interrupted waiting for Kafka to take " + sent.size() + " records", e);
            }
        }
        if (failed > 0) {
            throw new KafkaPublishException(failed + " of " + sent.size() + " records to '" + topic + "' not taken by"
                    + " Kafka within " + TIMEOUT.toSeconds() + " s: " + (first.getCause() != null ? first.getCause()
                    : first), first);
        }
    }

    private static byte[] key(String entity) {
        return entity.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }
}
