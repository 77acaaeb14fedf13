package dev.orderless.kafka;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a share-group consumer needs on the broker, declared once: the topic, its dead-letter topic, and the share
 * group reading from the earliest record. Kafka's default for a new share group is the latest record, which loses
 * whatever was produced before its first consumer joined.
 */
public final class KafkaTopology {
    private static final Logger log = LoggerFactory.getLogger(KafkaTopology.class);
    /** The broker's limit when it does not say: Kafka's default. */
    static final int DEFAULT_DELIVERY_COUNT_LIMIT = 5;
    private static final String DELIVERY_LIMIT = "group.share.delivery.count.limit";
    /** Each admin call's bound: a broker that does not answer in it is reported, not waited for. */
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private KafkaTopology() {
    }

    /**
     * Creates the topic with {@code partitions} partitions and the dead-letter topic with one, where they do not exist
     * (replication: the broker's default), and sets the share group to start from the earliest record. Idempotent.
     *
     * @param kafka      the Kafka client properties ({@code bootstrap.servers} at least)
     * @param options    the consumer's options: its topic, dead-letter topic and group
     * @param partitions 1 or more: a share group needs no more partitions than consumers, but a producer's
     *                   throughput grows with them
     * @throws TransientException if the broker did not answer
     */
    public static void declare(Map<String, Object> kafka, ShareConsumerOptions options, int partitions) {
        if (partitions < 1) {
            throw InvalidConfigurationException.refused("Kafka topology", "partitions", "must be 1 or more, was " + partitions);
        }
        try (Admin admin = admin(kafka)) {
            create(admin, new NewTopic(options.topic(), partitions, (short) -1));
            create(admin, new NewTopic(options.deadLetterTopic(), 1, (short) -1));
            ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, options.group());
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            log.info("Kafka topic '{}' ({} partitions), dead-letter topic '{}', share group '{}' from the earliest record",
                    options.topic(), partitions, options.deadLetterTopic(), options.group());
        } catch (ExecutionException | TimeoutException e) {
            throw failure(kafka, "declaring '" + options.topic() + "'", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientException("interrupted declaring '" + options.topic() + "'", e);
        }
    }

    /**
     * What a failed admin call means: a broker that did not answer (or answered "not now") is transient, naming where
     * it was looked for; a refusal that will not change by waiting (an invalid topic name, no authorization, share
     * groups off, a replication factor the cluster cannot give) is a configuration to fix, said once.
     */
    private static RuntimeException failure(Map<String, Object> kafka, String doing, Exception e) {
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        String where = "Kafka at " + kafka.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
        if (cause instanceof org.apache.kafka.common.errors.ApiException
                && !(cause instanceof org.apache.kafka.common.errors.RetriableException)) {
            return new InvalidConfigurationException(where + " refused " + doing + ": " + cause.getMessage()
                    + " (" + cause.getClass().getSimpleName() + ")", cause);
        }
        return new TransientException(where + " did not answer " + doing + " within " + TIMEOUT.toSeconds() + " s ("
                + cause + "): check that it runs and that bootstrap.servers (spring.kafka.bootstrap-servers) names it", e);
    }

    /**
     * The topic and dead-letter topic must exist; returns the broker's delivery count limit.
     *
     * @throws InvalidConfigurationException naming the topic that is missing and how to create it
     * @throws TransientException            if the broker did not answer
     */
    static int requireTopics(Map<String, Object> kafka, ShareConsumerOptions options) {
        try (Admin admin = admin(kafka)) {
            Collection<TopicListing> listings = admin.listTopics().listings().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            Set<String> names = listings.stream().map(TopicListing::name).collect(java.util.stream.Collectors.toSet());
            for (String topic : List.of(options.topic(), options.deadLetterTopic())) {
                if (!names.contains(topic)) {
                    throw new InvalidConfigurationException("Kafka share consumer: topic '" + topic + "' does not exist;"
                            + " create it and its dead-letter topic with KafkaTopology.declare(kafka, options, partitions)"
                            + " (in Spring Boot: orderless.kafka.declare=true, the default)");
                }
            }
            return deliveryCountLimit(admin);
        } catch (ExecutionException | TimeoutException e) {
            throw failure(kafka, "starting the share consumer of '" + options.topic() + "'", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientException("interrupted starting the share consumer of '" + options.topic() + "'", e);
        }
    }

    /** The broker's {@code group.share.delivery.count.limit}; Kafka's default if it cannot be read. */
    private static int deliveryCountLimit(Admin admin) throws InterruptedException {
        try {
            Collection<Node> nodes = admin.describeCluster().nodes().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            Node node = nodes.iterator().next();
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(node.id()));
            Config config = admin.describeConfigs(List.of(broker)).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .get(broker);
            ConfigEntry entry = config == null ? null : config.get(DELIVERY_LIMIT);
            if (entry != null && entry.value() != null) {
                return Integer.parseInt(entry.value());
            }
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            log.warn("Kafka did not say its {} ({}); taking Kafka's default, {}", DELIVERY_LIMIT, cause(e),
                    DEFAULT_DELIVERY_COUNT_LIMIT);
        }
        return DEFAULT_DELIVERY_COUNT_LIMIT;
    }

    private static void create(Admin admin, NewTopic topic) throws InterruptedException, ExecutionException,
            TimeoutException {
        try {
            admin.createTopics(List.of(topic)).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
    }

    static Admin admin(Map<String, Object> kafka) {
        Map<String, Object> properties = new java.util.HashMap<>();
        kafka.forEach((name, value) -> {
            if (AdminClientConfig.configNames().contains(name)) {
                properties.put(name, value);
            }
        });
        properties.putIfAbsent(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        properties.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return Admin.create(properties);
    }

    private static String cause(Exception e) {
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        return cause.toString();
    }
}
