package dev.orderless.testing.kafka;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * What tests do to a broker's topics and share groups, each a short-lived {@link Admin} client and bounded by
 * {@value #TIMEOUT_SECONDS} s; a failure is an {@link IllegalStateException} naming the operation and the broker.
 */
public final class KafkaTopics {
    /** How long one operation may take. */
    public static final int TIMEOUT_SECONDS = 30;

    private KafkaTopics() {
    }

    /**
     * Creates {@code topic} with {@code partitions} partitions and the broker's default replication; a topic that
     * exists already is fine (its partitions are left as they are).
     */
    public static void create(String bootstrap, String topic, int partitions) {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be 1 or more, not " + partitions);
        }
        run(bootstrap, "create topic " + topic, admin -> {
            try {
                return get(admin.createTopics(List.of(new NewTopic(topic, Optional.of(partitions), Optional.empty())))
                        .all());
            } catch (ExecutionException e) {
                if (e.getCause() instanceof TopicExistsException) {
                    return null;
                }
                throw new IllegalStateException(e.getCause());
            }
        });
    }

    /**
     * Makes share group {@code group} start from the earliest record of a partition it has not consumed before
     * ({@code share.auto.offset.reset=earliest}). The default, latest, skips what was produced before the group's
     * first consumer joined: a test that produces, then consumes, needs this first. The group need not exist yet.
     */
    public static void shareGroupFromEarliest(String bootstrap, String group) {
        alterGroup(bootstrap, group, "share.auto.offset.reset", "earliest");
    }

    /**
     * Sets share group {@code group}'s record lock duration ({@code share.record.lock.duration.ms}), within the
     * broker's bounds (for the brokers of this module: from 1 s to at least 60 s).
     */
    public static void shareGroupLockDuration(String bootstrap, String group, Duration lockDuration) {
        if (lockDuration.isNegative() || lockDuration.isZero()) {
            throw new IllegalArgumentException("lockDuration must be positive, not " + lockDuration);
        }
        alterGroup(bootstrap, group, "share.record.lock.duration.ms", String.valueOf(lockDuration.toMillis()));
    }

    private static void alterGroup(String bootstrap, String group, String name, String value) {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        run(bootstrap, "set " + name + "=" + value + " on share group " + group, admin -> getOrThrow(admin
                .incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(name, value),
                        AlterConfigOp.OpType.SET)))).all()));
    }

    /** Deletes {@code topics}; one that does not exist is fine. */
    public static void delete(String bootstrap, String... topics) {
        Collection<String> names = Arrays.asList(topics);
        run(bootstrap, "delete topics " + names, admin -> {
            try {
                return get(admin.deleteTopics(names).all());
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                    return null;
                }
                throw new IllegalStateException(e.getCause());
            }
        });
    }

    /**
     * How many records {@code topic} holds: over its partitions, the end offset minus the start offset (with
     * transactions, their markers count too). For a test that checks what reached a dead-letter topic.
     */
    public static long count(String bootstrap, String topic) {
        return run(bootstrap, "count the records of " + topic, admin -> {
            TopicDescription description = getOrThrow(admin.describeTopics(List.of(topic)).allTopicNames())
                    .get(topic);
            List<TopicPartition> partitions = description.partitions().stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> start = offsets(admin, partitions,
                    OffsetSpec.earliest());
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> end = offsets(admin, partitions,
                    OffsetSpec.latest());
            return partitions.stream().mapToLong(p -> end.get(p).offset() - start.get(p).offset()).sum();
        });
    }

    private static Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> offsets(Admin admin,
            List<TopicPartition> partitions, OffsetSpec spec) {
        return getOrThrow(admin.listOffsets(partitions.stream().collect(java.util.stream.Collectors.toMap(
                Function.identity(), p -> spec))).all());
    }

    private static <T> T run(String bootstrap, String what, Function<Admin, T> action) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, TIMEOUT_SECONDS * 1000))) {
            return action.apply(admin);
        } catch (RuntimeException e) {
            throw new IllegalStateException("Kafka at " + bootstrap + ": could not " + what + ": "
                    + KafkaNode.rootCause(e), e);
        }
    }

    private static <T> T get(Future<T> future) throws ExecutionException {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("no answer in " + TIMEOUT_SECONDS + " s", e);
        }
    }

    private static <T> T getOrThrow(Future<T> future) {
        try {
            return get(future);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }
}
