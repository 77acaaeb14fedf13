package dev.orderless.kafka;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.consume.internal.DeadLetterFields;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A share consumer's dead-letter topic: the letters not replayed yet, read and replayed. What was replayed is kept
 * as the committed position of a consumer group of its own ({@code orderless-replay-<dead-letter topic>}), so a
 * letter is replayed once however many times replay runs; a crash between sending and committing replays it again,
 * which the seq makes harmless. A replayed record carries its original key and headers, without the reason, and
 * {@code x-orderless-replay-count} one higher.
 */
public final class DeadLetterTopic {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(200);

    private final Map<String, Object> kafka;
    private final String deadLetterTopic;

    /**
     * The letters of {@code deadLetterTopic}.
     *
     * @param kafka           the Kafka client properties ({@code bootstrap.servers} at least)
     * @param deadLetterTopic the consumer's {@link ShareConsumerOptions#deadLetterTopic()}
     */
    public DeadLetterTopic(Map<String, Object> kafka, String deadLetterTopic) {
        if (kafka == null || !kafka.containsKey(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
            throw InvalidConfigurationException.refused("dead-letter topic", "bootstrap.servers",
                    "must be among the Kafka properties");
        }
        if (deadLetterTopic == null || deadLetterTopic.isBlank()) {
            throw InvalidConfigurationException.refused("dead-letter topic", "deadLetterTopic", "must be a topic name");
        }
        this.kafka = Map.copyOf(kafka);
        this.deadLetterTopic = deadLetterTopic;
    }

    /** The replay group's name: what it committed is what was replayed. */
    public String replayGroup() {
        return "orderless-replay-" + deadLetterTopic;
    }

    /**
     * Up to {@code limit} letters not replayed yet, oldest first per partition; nothing moves.
     *
     * @param limit 1 or more
     */
    public List<KafkaDeadLetter> peek(int limit) {
        if (limit < 1) {
            throw InvalidConfigurationException.refused("dead-letter topic", "limit", "must be 1 or more, was " + limit);
        }
        List<KafkaDeadLetter> letters = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            read(consumer, record -> {
                letters.add(letter(record));
                return letters.size() < limit;
            });
        }
        return letters;
    }

    /**
     * Sends every letter not replayed yet back to {@code topic} and records that they were.
     *
     * @param topic the work topic (the letters' own, usually)
     * @return how many letters were replayed
     * @throws TransientException if Kafka did not take a replayed record (nothing is marked replayed then)
     */
    public long replay(String topic) {
        long replayed = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer();
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ShareGroupConsumer.producerProperties(kafka))) {
            List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
            read(consumer, record -> {
                batch.add(record);
                return true;
            });
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (ConsumerRecord<byte[], byte[]> record : batch) {
                sent.add(producer.send(new ProducerRecord<>(topic, null, record.key(), record.value(), replayHeaders(record))));
            }
            for (Future<RecordMetadata> future : sent) {
                future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                replayed++;
            }
            Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> record : batch) {
                positions.merge(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1), (a, b) -> a.offset() >= b.offset() ? a : b);
            }
            if (!positions.isEmpty()) {
                consumer.commitSync(positions, TIMEOUT);
            }
            return replayed;
        } catch (ExecutionException | TimeoutException e) {
            throw new TransientException("replaying '" + deadLetterTopic + "' to '" + topic + "': Kafka did not take"
                    + " the records (" + replayed + " taken); nothing marked replayed, run it again: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientException("interrupted replaying '" + deadLetterTopic + "'", e);
        }
    }

    private interface Visitor {
        /** @return false to stop */
        boolean visit(ConsumerRecord<byte[], byte[]> record);
    }

    /** Reads from the replay group's position up to the end offsets as they were when it began. */
    private void read(KafkaConsumer<byte[], byte[]> consumer, Visitor visitor) {
        List<TopicPartition> partitions = consumer.partitionsFor(deadLetterTopic, TIMEOUT).stream()
                .map(p -> new TopicPartition(p.topic(), p.partition())).collect(Collectors.toList());
        consumer.assign(partitions);
        Map<TopicPartition, Long> ends = new HashMap<>(consumer.endOffsets(partitions, TIMEOUT));
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new java.util.HashSet<>(partitions), TIMEOUT);
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata at = committed.get(partition);
            if (at == null) {
                consumer.seekToBeginning(List.of(partition));
            } else {
                consumer.seek(partition, at.offset());
            }
        }
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (ends.entrySet().stream().anyMatch(e -> consumer.position(e.getKey(), TIMEOUT) < e.getValue())) {
            if (System.nanoTime() > deadline) {
                throw new TransientException("reading '" + deadLetterTopic + "': not at its end within "
                        + TIMEOUT.toSeconds() + " s");
            }
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                Long end = ends.get(new TopicPartition(record.topic(), record.partition()));
                if (end != null && record.offset() < end && !visitor.visit(record)) {
                    return;
                }
            }
        }
    }

    private KafkaConsumer<byte[], byte[]> consumer() {
        Map<String, Object> properties = new HashMap<>();
        kafka.forEach((name, value) -> {
            if (ConsumerConfig.configNames().contains(name)) {
                properties.put(name, value);
            }
        });
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, replayGroup());
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(properties);
    }

    private static KafkaDeadLetter letter(ConsumerRecord<byte[], byte[]> record) {
        Optional<String> seq = text(record, DeadLetterFields.SEQ);
        OptionalLong seqValue = OptionalLong.empty();
        if (seq.isPresent()) {
            try {
                seqValue = OptionalLong.of(Long.parseLong(seq.get()));
            } catch (NumberFormatException e) {
                // not ours: shown without a seq
            }
        }
        return new KafkaDeadLetter(text(record, DeadLetterFields.REASON_KIND).orElse("unknown"),
                text(record, DeadLetterFields.REASON).orElse("no reason given"), text(record, DeadLetterFields.ENTITY),
                seqValue, record.value() == null ? new byte[0] : record.value(), record.partition(), record.offset());
    }

    /** The letter's headers without the reason, the replay count one higher, when it was first dead-lettered kept. */
    private static RecordHeaders replayHeaders(ConsumerRecord<byte[], byte[]> record) {
        RecordHeaders headers = new RecordHeaders();
        long count = 0;
        for (Header header : record.headers()) {
            if (header.key().equals(DeadLetterFields.REPLAY_COUNT)) {
                try {
                    count = Long.parseLong(new String(header.value(), StandardCharsets.UTF_8));
                } catch (NumberFormatException e) {
                    count = 0;
                }
            } else if (header.key().equals(DeadLetterFields.DEAD_LETTERED_AT) || !header.key().startsWith("x-orderless-")) {
                headers.add(header);
            }
        }
        headers.add(DeadLetterFields.REPLAY_COUNT, Long.toString(count + 1).getBytes(StandardCharsets.UTF_8));
        return headers;
    }

    private static Optional<String> text(ConsumerRecord<byte[], byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? Optional.empty()
                : Optional.of(new String(header.value(), StandardCharsets.UTF_8));
    }
}
