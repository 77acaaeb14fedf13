package dev.orderless.kafka;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.consume.ConsumerBuilder;
import dev.orderless.consume.internal.ApplyingHandler;
import dev.orderless.consume.internal.ConsumerMetrics;
import dev.orderless.consume.internal.HandlerSettings;
import dev.orderless.consume.internal.Handling;
import dev.orderless.kafka.internal.DeadLetterWriter;
import dev.orderless.kafka.internal.ShareWorker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * N consumers of one Kafka share group (KIP-932), each applying what it polls with a {@link GuardedApplier}: the
 * guarantees and outcomes of the RabbitMQ consumers ({@code OperationConsumer}), on a broker that hands a topic's
 * records to many consumers at once with no order at all, which the guarded apply does not need.
 *
 * <ol>
 *   <li>A poll's records are applied together (one bulk write), each acknowledged on its own: ACCEPT only after
 *       MongoDB acknowledged its write (or found it stale).
 *   <li>Poison (undecodable, oversized, a field the schema does not allow, beyond the horizon) is written to the
 *       dead-letter topic with orderless's reason, kind, entity and seq headers, then REJECTed (Kafka has no
 *       dead-letter queue for share groups yet: KIP-1191). Replay with {@link DeadLetterTopic}.
 *   <li>A record MongoDB could not take is held by its consumer, its acquisition lock renewed, and tried again after
 *       a back-off: an outage of any length neither loses it nor spends the broker's delivery count; while MongoDB
 *       serves others it is held at most {@link ShareConsumerOptions#maxHold()}, then dead-lettered.
 *   <li>A record on its last delivery ({@link #deliveryCountLimit()}, the broker's
 *       {@code group.share.delivery.count.limit}) that cannot be applied at once goes to the dead-letter topic: the
 *       broker would archive it without a word if its consumer died holding it.
 *   <li>A consumer that dies mid-poll leaves its records to the group once their locks expire; a redelivery is a
 *       harmless duplicate.
 * </ol>
 *
 * <pre>
 * ShareGroupConsumer consumer = ShareGroupConsumer.builder(Map.of("bootstrap.servers", "localhost:9092"), applier)
 *         .options(ShareConsumerOptions.ofDefaults("enrollment.ops", "enrollment").withConcurrency(4))
 *         .meters(meterRegistry)
 *         .start();
 * ...
 * consumer.close();   // what is being applied finishes; the rest goes back to the group
 * </pre>
 *
 * Start-up fails with {@link InvalidConfigurationException} if the topic or its dead-letter topic does not exist
 * (create both with {@link KafkaTopology}), and with a {@link TransientException} if the broker did not answer.
 */
public final class ShareGroupConsumer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShareGroupConsumer.class);
    private static final Duration DEAD_LETTER_TIMEOUT = Duration.ofSeconds(30);

    private final ShareConsumerOptions options;
    private final List<ShareWorker> workers;
    private final CountDownLatch stop;
    private final ConsumerMetrics metrics;
    private final ApplyingHandler handler;
    private final DeadLetterWriter deadLetters;
    private final int deliveryCountLimit;
    private volatile boolean closed;

    private ShareGroupConsumer(ShareConsumerOptions options, List<ShareWorker> workers, CountDownLatch stop,
                               Handling handling, DeadLetterWriter deadLetters, int deliveryCountLimit) {
        this.options = options;
        this.workers = workers;
        this.stop = stop;
        this.metrics = handling.metrics();
        this.handler = handling.single();
        this.deadLetters = deadLetters;
        this.deliveryCountLimit = deliveryCountLimit;
    }

    /**
     * Collects what a consumer needs; {@link Builder#start()} starts it.
     *
     * @param kafka   the Kafka client properties: {@code bootstrap.servers} at least, and any security settings; the
     *                consumer sets the group, the deserializers and the explicit acknowledgement itself
     * @param applier applies each operation to its collection
     * @return a builder with the defaults: the canonical envelope, no meters kept, no observations, no history
     */
    public static Builder builder(Map<String, Object> kafka, GuardedApplier applier) {
        return new Builder(kafka, applier);
    }

    /** How it consumes. */
    public ShareConsumerOptions options() {
        return options;
    }

    /** True while every one of its consumers polls: false once closed, or if a consumer thread ended. */
    public boolean isRunning() {
        return !closed && workers.stream().allMatch(ShareWorker::alive);
    }

    /**
     * Records being retried now: each failed (MongoDB unavailable, or refusing the write for a reason of
     * configuration) and is held by its consumer until it is applied, dead-lettered or handed back
     * ({@code orderless.consume.retrying}).
     */
    public int retrying() {
        return metrics.retrying();
    }

    /**
     * What it waits for, while it waits: {@code MongoDB: ...} from the first apply that found MongoDB unavailable
     * until MongoDB answers again; its records are held meanwhile, nothing is lost.
     */
    public Optional<String> waitingFor() {
        return handler.waitingFor();
    }

    /**
     * How many times the broker delivers a record before it archives it: its {@code group.share.delivery.count.limit},
     * read at start (5 if the broker did not say).
     */
    public int deliveryCountLimit() {
        return deliveryCountLimit;
    }

    /**
     * Stops consuming: records waiting on a retry are handed back at once; a poll being applied gets up to
     * {@link ShareConsumerOptions#shutdownTimeout()} to finish; the acknowledgements are sent and what was not
     * settled goes back to the group.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop.countDown();
        workers.forEach(ShareWorker::signalStop);
        long deadline = System.nanoTime() + options.shutdownTimeout().toNanos();
        for (ShareWorker worker : workers) {
            worker.finish(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        }
        deadLetters.close();
        log.info("Kafka share consumer of '{}' (group '{}') stopped", options.topic(), options.group());
    }

    /**
     * Collects the parts; {@link #start()} checks the topics and starts the consumers. The decoder, meters
     * ({@code orderless.consume.*} tagged {@code queue=<topic>}, as the RabbitMQ consumers'), observations and
     * history are set as for every orderless consumer ({@link ConsumerBuilder}).
     */
    public static final class Builder extends ConsumerBuilder<Builder> {
        private final Map<String, Object> kafka;
        private ShareConsumerOptions options;

        private Builder(Map<String, Object> kafka, GuardedApplier applier) {
            super("Kafka share consumer", applier);
            if (kafka == null || !kafka.containsKey(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
                throw InvalidConfigurationException.refused("Kafka share consumer", "bootstrap.servers",
                        "must be among the Kafka properties, e.g. Map.of(\"bootstrap.servers\", \"localhost:9092\")");
            }
            this.kafka = Map.copyOf(kafka);
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * How it consumes: the topic, its dead-letter topic, the share group, the consumers, the poll; required.
         *
         * @param options from {@link ShareConsumerOptions#ofDefaults(String, String)} and its {@code withX} copies
         * @return this builder
         */
        public Builder options(ShareConsumerOptions options) {
            this.options = options;
            return this;
        }

        /**
         * Checks the topics, reads the broker's delivery count limit, and starts one share consumer and thread per
         * {@link ShareConsumerOptions#concurrency()}.
         *
         * @return the running consumer; close it to stop
         * @throws InvalidConfigurationException if options are missing or a topic does not exist
         * @throws TransientException            if the broker did not answer
         */
        public ShareGroupConsumer start() {
            if (options == null) {
                throw new InvalidConfigurationException("Kafka share consumer: options are required, e.g."
                        + " ShareConsumerOptions.ofDefaults(\"my.topic\", \"my-group\")");
            }
            checkParts();
            int limit = KafkaTopology.requireTopics(kafka, options);
            CountDownLatch stop = new CountDownLatch(1);
            Handling handling = handling(new HandlerSettings(options.topic(), options.deadLetterTopic(),
                    options.maxMessageBytes(), options.maxHold(), options.backoff()), stop);
            DeadLetterWriter deadLetters = new DeadLetterWriter(new KafkaProducer<>(producerProperties(kafka)),
                    options.topic(), options.deadLetterTopic(), DEAD_LETTER_TIMEOUT, Clock.systemUTC());
            List<ShareWorker> workers = new ArrayList<>();
            try {
                deadLetters.warmUp();
                for (int i = 0; i < options.concurrency(); i++) {
                    workers.add(new ShareWorker(new KafkaShareConsumer<>(consumerProperties(kafka, options)),
                            options.topic(), i, handling, deadLetters, limit, options.pollTimeout()));
                }
            } catch (RuntimeException e) {
                deadLetters.close();
                throw e;
            }
            workers.forEach(ShareWorker::start);
            log.info("consuming '{}' in share group '{}' with {} consumers, {}, dead letters to '{}', the broker's"
                            + " delivery limit {}{}", options.topic(), options.group(), options.concurrency(),
                    options.maxPollRecords() > 1 ? "polls of up to " + options.maxPollRecords() + " applied together"
                            : "one record at a time", options.deadLetterTopic(), limit,
                    recordedIn().map(h -> ", recorded in '" + h.collection().getNamespace().getCollectionName() + "'")
                            .orElse(""));
            return new ShareGroupConsumer(options, workers, stop, handling, deadLetters, limit);
        }
    }

    /** The application's properties, and what the consumer owns: the group, bytes, explicit acknowledgement. */
    static Map<String, Object> consumerProperties(Map<String, Object> kafka, ShareConsumerOptions options) {
        Map<String, Object> properties = new HashMap<>(kafka);
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, options.group());
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, options.maxPollRecords());
        // a fetch acquires at most a poll's records: by default (batch_optimized) it locks whole record batches, more
        // than a poll hands over, whose locks run out while earlier polls are applied and come back as duplicates
        properties.put(ConsumerConfig.SHARE_ACQUIRE_MODE_CONFIG, "record_limit");
        properties.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "orderless-" + options.topic());
        return properties;
    }

    /** The application's properties, and a producer that loses nothing and writes nothing twice. */
    static Map<String, Object> producerProperties(Map<String, Object> kafka) {
        Map<String, Object> properties = new HashMap<>();
        kafka.forEach((name, value) -> {
            if (ProducerConfig.configNames().contains(name)) {
                properties.put(name, value);
            }
        });
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        return properties;
    }
}
