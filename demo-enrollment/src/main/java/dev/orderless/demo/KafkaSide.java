package dev.orderless.demo;

import dev.orderless.TransientException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.history.History;
import dev.orderless.kafka.DeadLetterTopic;
import dev.orderless.kafka.KafkaOperationPublisher;
import dev.orderless.kafka.KafkaTopology;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import dev.orderless.testing.kafka.EmbeddedKafka;
import dev.orderless.testing.kafka.KafkaBroker;
import dev.orderless.testing.kafka.KafkaBrokers;
import dev.orderless.testing.kafka.KafkaSettings;
import dev.orderless.testing.kafka.KafkaTopics;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * {@code --broker kafka}: the broker (the one {@code --kafka} or {@code KAFKA_BOOTSTRAP} names, else an embedded
 * KRaft broker that goes away with the process), and this process's topic and share group.
 *
 * <p>Each process gets a topic and a share group of its own ({@code <queue>.<run>}): a share group keeps its place
 * in a topic across runs, and a topic cannot be emptied as a queue is purged, so a fresh pair is how a run starts
 * from nothing. On a broker it does not own, it deletes the pair when it closes.
 */
final class KafkaSide implements AutoCloseable {
    /**
     * Fewer partitions than the demo's default four consumers: a share group hands one partition's records to many
     * consumers at once, which a consumer group cannot.
     */
    static final int PARTITIONS = 2;
    private static final int CONNECT_SECONDS = 10;
    /**
     * The embedded broker with Kafka's own lock and session defaults (30 s, 45 s), not the test support's seconds:
     * with a 2 s lock, a poll of 50 records on a busy machine outlived its lock, the records went to another
     * consumer as well, and a 3,600-message run counted twice its messages and dead-lettered some poison twice.
     */
    private static final KafkaSettings EMBEDDED = KafkaSettings.ofDefaults().withRecordLockDuration(Duration.ofSeconds(30))
            .withShareSessionTimeout(Duration.ofSeconds(45)).withShareHeartbeatInterval(Duration.ofSeconds(5));

    private final KafkaBroker broker;
    private final boolean owned;
    final String topic;
    final String group;
    private final Map<String, Object> properties;

    private KafkaSide(KafkaBroker broker, boolean owned, String topic, String group) {
        this.broker = broker;
        this.owned = owned;
        this.topic = topic;
        this.group = group;
        this.properties = Map.of("bootstrap.servers", broker.bootstrapServers());
    }

    /** The broker {@code options} name (else an embedded one), checked to answer. */
    static KafkaSide connect(DemoOptions options) {
        KafkaBroker broker;
        try {
            broker = options.kafka().isPresent() ? KafkaBrokers.external(options.kafka().get())
                    : EmbeddedKafka.start(EMBEDDED);
        } catch (IllegalStateException e) {
            throw new TransientException("the embedded Kafka broker did not start: " + e.getMessage(), e);
        }
        String run = Long.toString(System.currentTimeMillis(), 36);
        KafkaSide side = new KafkaSide(broker, options.kafka().isEmpty(), options.queue() + "." + run,
                "orderless-demo-" + options.command() + "-" + run);
        try {
            side.checkReachable();
            return side;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    private void checkReachable() {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, CONNECT_SECONDS * 1000,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, CONNECT_SECONDS * 1000))) {
            admin.describeCluster().nodes().get(CONNECT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            throw new TransientException("Kafka at " + broker.bootstrapServers() + " did not answer within "
                    + CONNECT_SECONDS + " s: check that it is running and that --kafka (or KAFKA_BOOTSTRAP) names its"
                    + " host and port", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientException("interrupted while connecting to Kafka at " + broker.bootstrapServers(), e);
        }
    }

    /** The client properties: the bootstrap servers. */
    Map<String, Object> properties() {
        return properties;
    }

    String bootstrap() {
        return broker.bootstrapServers();
    }

    /** The embedded broker, which {@code chaos} may restart; empty on a broker named by the user. */
    Optional<EmbeddedKafka> embedded() {
        return broker instanceof EmbeddedKafka embedded ? Optional.of(embedded) : Optional.empty();
    }

    ShareConsumerOptions options(int concurrency) {
        return ShareConsumerOptions.ofDefaults(topic, group).withConcurrency(concurrency);
    }

    String deadLetterTopic() {
        return options(1).deadLetterTopic();
    }

    /** The topic, its dead-letter topic and the share group (reading from the earliest record). */
    void declare() {
        KafkaTopology.declare(properties, options(1), PARTITIONS);
    }

    /**
     * The share group's acquisition lock, for {@code chaos}: what a killed consumer held comes back after it. On a
     * broker that refuses it (its bounds), the broker's own stands, and the run waits that long instead.
     */
    void lockDuration(Duration lock) {
        try {
            KafkaTopics.shareGroupLockDuration(bootstrap(), group, lock);
        } catch (IllegalStateException | IllegalArgumentException e) {
            // the broker's lock duration applies
        }
    }

    /** {@code concurrency} share consumers applying through {@code applier}, recording in {@code history} if given. */
    ShareGroupConsumer startConsumers(GuardedApplier applier, int concurrency, MeterRegistry meters,
                                      Optional<History> history) {
        ShareGroupConsumer.Builder builder = ShareGroupConsumer.builder(properties, applier)
                .options(options(concurrency)).meters(meters);
        history.ifPresent(builder::history);
        return builder.start();
    }

    /** A publisher to the topic (key = student; every record acknowledged by the broker when it returns). */
    KafkaOperationPublisher publisher() {
        return KafkaOperationPublisher.start(properties, topic);
    }

    DeadLetterTopic deadLetters() {
        return new DeadLetterTopic(properties, deadLetterTopic());
    }

    /** Records in the dead-letter topic. */
    long deadLettered() {
        return KafkaTopics.count(bootstrap(), deadLetterTopic());
    }

    String describe() {
        return (owned ? "embedded broker at " : "broker at ") + bootstrap() + ", topic '" + topic + "' ("
                + PARTITIONS + " partitions; dead letters: '" + deadLetterTopic() + "'), share group '" + group + "'";
    }

    /** Deletes the topics on a broker it does not own (best effort: a run's result stands without it). */
    @Override
    public void close() {
        if (!owned) {
            try {
                KafkaTopics.delete(bootstrap(), topic, deadLetterTopic());
            } catch (RuntimeException e) {
                // the broker went away: the topics stay, named in the run's output
            }
        }
        broker.close();
    }
}
