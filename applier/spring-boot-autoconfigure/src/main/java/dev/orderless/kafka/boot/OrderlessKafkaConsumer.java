package dev.orderless.kafka.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.boot.internal.ConsumerWatch;
import dev.orderless.kafka.KafkaTopology;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The Kafka share-group consumer as a Spring bean, started and stopped with the context in the phase of the other
 * orderless consumers. Starting declares the topic, its dead-letter topic and the share group's start at the earliest
 * record ({@link KafkaTopology}, unless {@code orderless.kafka.declare=false}) and starts the
 * {@link ShareGroupConsumer}. If Kafka does not answer, the application starts anyway: the consumer says so at WARN,
 * its health is DOWN with the reason, and it tries again every {@value #RETRY_SECONDS} s. The same watch restarts a
 * consumer whose threads ended on their own, so that it never stays down in silence. A configuration Kafka or the
 * consumer refuses (a missing topic with {@code declare=false}, client properties it cannot take) fails the start.
 *
 * <p>What health reads never waits for a start in progress: the state is read without the lock.
 */
public final class OrderlessKafkaConsumer implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(OrderlessKafkaConsumer.class);
    static final long RETRY_SECONDS = ConsumerWatch.RETRY_SECONDS;

    private final Map<String, Object> kafka;
    private final ShareConsumerOptions options;
    private final OptionalInt declarePartitions;
    private final Supplier<ShareGroupConsumer> starter;
    private final ConsumerWatch<ShareGroupConsumer> watch;

    /**
     * @param kafka             the Kafka client properties the topology is declared with
     * @param options           what it consumes
     * @param declarePartitions the topic's partitions if it is declared at start-up; empty: not declared
     * @param starter           starts the consumer once the topology is declared; called again after a failed start
     * @param before            what must happen before it consumes, while it has not (the history's start to be
     *                          decided): asked at each try, without waiting
     */
    OrderlessKafkaConsumer(Map<String, Object> kafka, ShareConsumerOptions options, OptionalInt declarePartitions,
                           Supplier<ShareGroupConsumer> starter, Supplier<Optional<String>> before) {
        this.kafka = Map.copyOf(kafka);
        this.options = options;
        this.declarePartitions = declarePartitions;
        this.starter = starter;
        this.watch = new ConsumerWatch<>(log, "Kafka share consumer of '" + options.topic() + "'", before,
                this::declareAndStart, ShareGroupConsumer::isRunning, e -> e instanceof TransientException
                        ? Optional.of("Kafka does not answer: " + e.getMessage()) : Optional.empty());
    }

    /** What it consumes: the topic, its dead-letter topic, the share group, the consumers, the poll. */
    public ShareConsumerOptions options() {
        return options;
    }

    /**
     * Starts consuming, or, if Kafka does not answer, starts anyway and tries again every {@value #RETRY_SECONDS} s
     * (a bad configuration throws).
     */
    @Override
    public void start() {
        watch.start("orderless-kafka-watch-" + options.topic());
    }

    /** How often the watch looks, before {@link #start()}: {@value #RETRY_SECONDS} s unless a test asks otherwise. */
    void watchEvery(Duration interval) {
        watch.every(interval);
    }

    /** One look of the watch, as its schedule takes it: restarts consumers that stopped on their own. */
    void watch() {
        watch.watch();
    }

    /** Declares the topology (unless told not to) and starts the consumer. */
    private ShareGroupConsumer declareAndStart() {
        try {
            declarePartitions.ifPresent(partitions -> KafkaTopology.declare(kafka, options, partitions));
            return starter.get();
        } catch (KafkaException e) {
            // the Kafka client refused its properties (a ConfigException: a bootstrap address it cannot resolve, a
            // setting a share consumer does not take): a configuration to change, not an outage to wait out
            throw new InvalidConfigurationException("orderless.kafka: the Kafka client refused the properties from"
                    + " spring.kafka.* for '" + options.topic() + "': " + e.getMessage(), e);
        }
    }

    /** Stops the watch, then the consumer: what is being applied finishes, the rest goes back to the group. */
    @Override
    public void stop() {
        watch.stop();
    }

    /** True from start to stop, also while waiting for Kafka, so that stopping the context stops it. */
    @Override
    public boolean isRunning() {
        return watch.isStarted();
    }

    /** True while every consumer thread consumes. Never waits for a start in progress. */
    public boolean isConsuming() {
        return watch.current().map(ShareGroupConsumer::isRunning).orElse(false);
    }

    /** Records held now after a transient MongoDB failure (0 while not consuming). */
    public int retrying() {
        return watch.current().map(ShareGroupConsumer::retrying).orElse(0);
    }

    /** The broker's {@code group.share.delivery.count.limit}, read when the consumer started; empty before. */
    public OptionalInt deliveryCountLimit() {
        return watch.current().map(consumer -> OptionalInt.of(consumer.deliveryCountLimit()))
                .orElse(OptionalInt.empty());
    }

    /**
     * Why it is not consuming though started (Kafka does not answer, a refusal, consumers that stopped on their own),
     * or, while it consumes, why it applies nothing ({@code MongoDB: ...}: MongoDB unavailable; its records are
     * held), if so.
     */
    public Optional<String> waitingFor() {
        Optional<ShareGroupConsumer> current = watch.current();
        if (current.isPresent() && !current.get().isRunning()) {
            return Optional.of("its consumers of '" + options.topic() + "' stopped (a consumer thread ended, or it was"
                    + " closed); the watch restarts them within " + watch.interval().toSeconds() + " s");
        }
        return watch.waiting().or(() -> current.flatMap(ShareGroupConsumer::waitingFor));
    }
}
