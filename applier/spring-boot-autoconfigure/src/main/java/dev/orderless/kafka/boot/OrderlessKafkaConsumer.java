package dev.orderless.kafka.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.kafka.KafkaTopology;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
    static final long RETRY_SECONDS = 5;

    private final Map<String, Object> kafka;
    private final ShareConsumerOptions options;
    private final OptionalInt declarePartitions;
    private final Supplier<ShareGroupConsumer> starter;
    private final Supplier<Optional<String>> before;
    private volatile Optional<ShareGroupConsumer> consuming = Optional.empty();
    private volatile Optional<String> waiting = Optional.empty();
    private Optional<ScheduledExecutorService> watching = Optional.empty();
    private boolean started;
    private Duration watchInterval = Duration.ofSeconds(RETRY_SECONDS);

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
        this.before = before;
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
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        tryStart(true);
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "orderless-kafka-watch-" + options.topic());
            thread.setDaemon(true);
            return thread;
        });
        executor.scheduleWithFixedDelay(this::watch, watchInterval.toMillis(), watchInterval.toMillis(),
                TimeUnit.MILLISECONDS);
        watching = Optional.of(executor);
    }

    /** How often the watch looks, before {@link #start()}: {@value #RETRY_SECONDS} s unless a test asks otherwise. */
    synchronized void watchEvery(Duration interval) {
        this.watchInterval = interval;
    }

    /** Starts the consumer if it is not consuming, restarting one whose threads ended. Never throws: it says why. */
    synchronized void watch() {
        try {
            if (!started) {
                return;
            }
            Optional<ShareGroupConsumer> current = consuming;
            if (current.isPresent() && !current.get().isRunning()) {
                String why = "its consumers of '" + options.topic() + "' stopped on their own (a consumer thread"
                        + " ended); restarting them";
                log.error("Kafka share consumer: {}", why);
                consuming = Optional.empty();
                waiting = Optional.of(why);
                closeQuietly(current.get());
            }
            if (consuming.isEmpty()) {
                tryStart(false);
            }
        } catch (RuntimeException e) {
            // an exception would end the schedule in silence: say it (once per reason), and keep trying
            notYet("it failed: " + e);
        }
    }

    /**
     * Declares and starts; false if what must come first has not, or Kafka did not answer.
     *
     * @param atStart in {@link #start()}, where a refusal fails the context's start; on the watch's thread it is said
     */
    private boolean tryStart(boolean atStart) {
        Optional<String> first = before.get();
        if (first.isPresent()) {
            return notYet(first.get());
        }
        try {
            declarePartitions.ifPresent(partitions -> KafkaTopology.declare(kafka, options, partitions));
            consuming = Optional.of(starter.get());
            waiting.ifPresent(why -> log.info("Kafka share consumer of '{}' started after: {}", options.topic(), why));
            waiting = Optional.empty();
            return true;
        } catch (InvalidConfigurationException e) {
            return refused(e, atStart);
        } catch (TransientException e) {
            return notYet("Kafka does not answer: " + e.getMessage());
        } catch (KafkaException e) {
            // the Kafka client refused its properties (a ConfigException: a bootstrap address it cannot resolve, a
            // setting a share consumer does not take): a configuration to change, not an outage to wait out
            return refused(new InvalidConfigurationException("orderless.kafka: the Kafka client refused the"
                    + " properties from spring.kafka.* for '" + options.topic() + "': " + e.getMessage(), e), atStart);
        }
    }

    /** At start-up, throws (the start fails naming it); on the watch's thread, says it and keeps trying. */
    private boolean refused(InvalidConfigurationException e, boolean atStart) {
        if (atStart) {
            throw e;
        }
        if (!waiting.equals(Optional.of(e.getMessage()))) {
            log.error("Kafka share consumer of '{}' cannot start: {}", options.topic(), e.getMessage());
        }
        waiting = Optional.of(e.getMessage());
        return false;
    }

    /** Not started, saying {@code why}: said once per reason, and tried again by the watch. */
    private boolean notYet(String why) {
        if (!waiting.equals(Optional.of(why))) {
            log.warn("Kafka share consumer of '{}' not started, {}; trying again every {} s (its health says so"
                    + " meanwhile)", options.topic(), why, RETRY_SECONDS);
        }
        waiting = Optional.of(why);
        return false;
    }

    private void closeQuietly(ShareGroupConsumer consumer) {
        try {
            consumer.close();
        } catch (RuntimeException e) {
            log.warn("Kafka share consumer of '{}': closing the stopped consumer failed ({})", options.topic(),
                    e.toString());
        }
    }

    /** Stops the watch, then the consumer: what is being applied finishes, the rest goes back to the group. */
    @Override
    public synchronized void stop() {
        watching.ifPresent(ScheduledExecutorService::shutdownNow);
        watching = Optional.empty();
        try {
            consuming.ifPresent(ShareGroupConsumer::close);
        } finally {
            consuming = Optional.empty();
            started = false;
        }
    }

    /** True from start to stop, also while waiting for Kafka, so that stopping the context stops it. */
    @Override
    public synchronized boolean isRunning() {
        return started;
    }

    /** True while every consumer thread consumes. Never waits for a start in progress. */
    public boolean isConsuming() {
        return consuming.map(ShareGroupConsumer::isRunning).orElse(false);
    }

    /** Records held now after a transient MongoDB failure (0 while not consuming). */
    public int retrying() {
        return consuming.map(ShareGroupConsumer::retrying).orElse(0);
    }

    /** The broker's {@code group.share.delivery.count.limit}, read when the consumer started; empty before. */
    public OptionalInt deliveryCountLimit() {
        return consuming.map(consumer -> OptionalInt.of(consumer.deliveryCountLimit())).orElse(OptionalInt.empty());
    }

    /**
     * Why it is not consuming though started (Kafka does not answer, a refusal, consumers that stopped on their own),
     * or, while it consumes, why it applies nothing ({@code MongoDB: ...}: MongoDB unavailable; its records are
     * held), if so.
     */
    public Optional<String> waitingFor() {
        Optional<ShareGroupConsumer> current = consuming;
        if (current.isPresent() && !current.get().isRunning()) {
            return Optional.of("its consumers of '" + options.topic() + "' stopped (a consumer thread ended, or it was"
                    + " closed); the watch restarts them within " + watchInterval.toSeconds() + " s");
        }
        return waiting.or(() -> current.flatMap(ShareGroupConsumer::waitingFor));
    }
}
