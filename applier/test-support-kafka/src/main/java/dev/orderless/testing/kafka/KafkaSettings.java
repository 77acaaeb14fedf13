package dev.orderless.testing.kafka;

import java.time.Duration;
import java.util.Objects;

/**
 * How a broker this module starts treats share groups: short timeouts, so that tests of what happens to a record
 * whose consumer died take seconds, not the broker defaults' minute.
 *
 * <p>What a test can rely on, measured against Kafka 4.2's share groups:
 * <ul>
 *   <li>A record a consumer acquired and neither acknowledged nor released (the consumer hangs, or is killed
 *       mid-poll) is offered again after {@link #recordLockDuration()}: the acquisition lock times out. A consumer
 *       that is closed releases what it holds at once.</li>
 *   <li>A record delivered {@link #deliveryCountLimit()} times without being accepted (released, or its lock timed
 *       out, each time) is <em>archived</em>: it is never delivered again, to any consumer, and nothing is told of
 *       it. A consumer that wants to keep such a record (a dead-letter topic) must do so itself, before the
 *       delivery that reaches the limit; the record's {@code deliveryCount()} says which delivery it is.</li>
 *   <li>A member that stops heartbeating leaves its group after {@link #shareSessionTimeout()}; its share session
 *       and what it acquired are released then, if the lock has not timed out first.</li>
 * </ul>
 * The limit and the timeouts are broker-wide ({@code group.share.*} broker settings, with their minimums lowered to
 * match); one group's lock duration can still be changed with
 * {@link KafkaTopics#shareGroupLockDuration(String, String, Duration)}.
 *
 * @param recordLockDuration how long a record a consumer acquired stays locked to it
 *                           ({@code group.share.record.lock.duration.ms}); from 1 s to 1 h
 * @param deliveryCountLimit how many times a record is delivered before it is archived
 *                           ({@code group.share.delivery.count.limit}); from 2 to 10
 * @param shareSessionTimeout how long a silent share-group member stays a member
 *                            ({@code group.share.session.timeout.ms}); from 1 s to 1 h
 * @param shareHeartbeatInterval how often a share-group member heartbeats
 *                               ({@code group.share.heartbeat.interval.ms}); from 100 ms, below the session timeout
 * @param defaultPartitions the partitions of a topic the broker creates on first use ({@code num.partitions}); 1 or
 *                          more
 */
public record KafkaSettings(Duration recordLockDuration, int deliveryCountLimit, Duration shareSessionTimeout,
        Duration shareHeartbeatInterval, int defaultPartitions) {
    private static final Duration ONE_SECOND = Duration.ofSeconds(1);
    private static final Duration ONE_HOUR = Duration.ofHours(1);

    /** Validates every parameter, naming the one that is out of range and its allowed range. */
    public KafkaSettings {
        Objects.requireNonNull(recordLockDuration, "recordLockDuration");
        Objects.requireNonNull(shareSessionTimeout, "shareSessionTimeout");
        Objects.requireNonNull(shareHeartbeatInterval, "shareHeartbeatInterval");
        within("recordLockDuration", recordLockDuration, ONE_SECOND, ONE_HOUR);
        if (deliveryCountLimit < 2 || deliveryCountLimit > 10) {
            throw new IllegalArgumentException("deliveryCountLimit must be from 2 to 10 (the broker's range), not "
                    + deliveryCountLimit);
        }
        within("shareSessionTimeout", shareSessionTimeout, ONE_SECOND, ONE_HOUR);
        within("shareHeartbeatInterval", shareHeartbeatInterval, Duration.ofMillis(100), ONE_HOUR);
        if (shareHeartbeatInterval.compareTo(shareSessionTimeout) >= 0) {
            throw new IllegalArgumentException("shareHeartbeatInterval (" + shareHeartbeatInterval
                    + ") must be shorter than shareSessionTimeout (" + shareSessionTimeout + ")");
        }
        if (defaultPartitions < 1) {
            throw new IllegalArgumentException("defaultPartitions must be 1 or more, not " + defaultPartitions);
        }
    }

    private static void within(String name, Duration value, Duration min, Duration max) {
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " must be from " + min + " to " + max + ", not " + value);
        }
    }

    /**
     * Settings for tests: a 2 s record lock (long enough that a consumer under a loaded CI machine acknowledges in
     * time, short enough that a test waiting for a lock to time out takes seconds), 5 deliveries, a 6 s share
     * session, a 500 ms heartbeat, topics created with 1 partition.
     */
    public static KafkaSettings ofDefaults() {
        return new KafkaSettings(Duration.ofSeconds(2), 5, Duration.ofSeconds(6), Duration.ofMillis(500), 1);
    }

    /** A copy with another {@link #recordLockDuration()}. */
    public KafkaSettings withRecordLockDuration(Duration recordLockDuration) {
        return new KafkaSettings(recordLockDuration, deliveryCountLimit, shareSessionTimeout, shareHeartbeatInterval,
                defaultPartitions);
    }

    /** A copy with another {@link #deliveryCountLimit()}. */
    public KafkaSettings withDeliveryCountLimit(int deliveryCountLimit) {
        return new KafkaSettings(recordLockDuration, deliveryCountLimit, shareSessionTimeout, shareHeartbeatInterval,
                defaultPartitions);
    }

    /** A copy with another {@link #shareSessionTimeout()}. */
    public KafkaSettings withShareSessionTimeout(Duration shareSessionTimeout) {
        return new KafkaSettings(recordLockDuration, deliveryCountLimit, shareSessionTimeout, shareHeartbeatInterval,
                defaultPartitions);
    }

    /** A copy with another {@link #shareHeartbeatInterval()}. */
    public KafkaSettings withShareHeartbeatInterval(Duration shareHeartbeatInterval) {
        return new KafkaSettings(recordLockDuration, deliveryCountLimit, shareSessionTimeout, shareHeartbeatInterval,
                defaultPartitions);
    }

    /** A copy with another {@link #defaultPartitions()}. */
    public KafkaSettings withDefaultPartitions(int defaultPartitions) {
        return new KafkaSettings(recordLockDuration, deliveryCountLimit, shareSessionTimeout, shareHeartbeatInterval,
                defaultPartitions);
    }
}
