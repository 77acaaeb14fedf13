package dev.orderless.kafka;

import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.consume.internal.OptionRules;
import java.time.Duration;

/**
 * How a {@link ShareGroupConsumer} consumes. Immutable: start from {@link #ofDefaults(String, String)} and change
 * with the {@code withX} copies; every value is checked here, with a message naming it.
 *
 * @param topic            the topic the operations are produced to (record key: the entity)
 * @param deadLetterTopic  where poison goes, with its reason and entity in headers; by default
 *                         {@link #defaultDeadLetterTopic(String)}
 * @param group            the share group the consumers join: every consumer of the group shares the topic's records
 * @param concurrency      consumers (a {@code KafkaShareConsumer} and a thread each) in this process
 * @param maxPollRecords   records taken by one poll and applied together: their first writes in one bulk write, each
 *                         record acknowledged on its own ({@code max.poll.records})
 * @param pollTimeout      how long a poll waits for records
 * @param maxMessageBytes  larger record values are dead-lettered unread
 * @param backoff          the pauses between attempts at a record MongoDB could not take (it is held meanwhile, its
 *                         acquisition lock renewed)
 * @param shutdownTimeout  how long close() lets a poll being applied finish before its records are released
 * @param maxHold          how long one record may keep failing while MongoDB applies others before it is
 *                         dead-lettered as {@code held too long}; while MongoDB is down for everyone it is held
 *                         without limit
 */
public record ShareConsumerOptions(String topic, String deadLetterTopic, String group, int concurrency,
                                   int maxPollRecords, Duration pollTimeout, int maxMessageBytes, Backoff backoff,
                                   Duration shutdownTimeout, Duration maxHold) {
    private static final String OPTIONS = "share consumer options";
    /** Records per poll by default: a bulk write of 50 costs about 0.1 MongoDB round trip per record. */
    public static final int DEFAULT_MAX_POLL_RECORDS = 50;

    public ShareConsumerOptions {
        requireName("topic", topic);
        requireName("deadLetterTopic", deadLetterTopic);
        requireName("group", group);
        if (topic.equals(deadLetterTopic)) {
            throw InvalidConfigurationException.refused(OPTIONS, "deadLetterTopic", "must differ from topic '" + topic + "'");
        }
        range("concurrency", concurrency, 1, 256);
        range("maxPollRecords", maxPollRecords, 1, 1000);
        positive("pollTimeout", pollTimeout);
        range("maxMessageBytes", maxMessageBytes, 64, 64 * 1024 * 1024);
        if (backoff == null) {
            throw InvalidConfigurationException.refused(OPTIONS, "backoff", "must be set, e.g. Backoff.of(initial, max)");
        }
        positive("shutdownTimeout", shutdownTimeout);
        positive("maxHold", maxHold);
    }

    /** The dead-letter topic of {@code topic} unless one is named: {@code <topic>.dlt}. */
    public static String defaultDeadLetterTopic(String topic) {
        return topic + ".dlt";
    }

    /**
     * One consumer in the share group {@code group}, polls of up to 50 records waiting up to 100 ms, 256 KiB values,
     * attempts from 100 ms doubling to 5 s, 10 s to shut down, 30 s of hold for a record that fails while others are
     * applied.
     */
    public static ShareConsumerOptions ofDefaults(String topic, String group) {
        return new ShareConsumerOptions(topic, topic == null ? null : defaultDeadLetterTopic(topic), group, 1,
                DEFAULT_MAX_POLL_RECORDS, Duration.ofMillis(100), dev.orderless.message.Envelope.DEFAULT_MAX_BYTES,
                Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(5)), Duration.ofSeconds(10),
                Duration.ofSeconds(30));
    }

    /**
     * Where poison goes.
     *
     * @param deadLetterTopic a topic other than the work topic; {@code <topic>.dlt} by default
     * @return a copy with it
     */
    public ShareConsumerOptions withDeadLetterTopic(String deadLetterTopic) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    /**
     * How many share consumers (a thread each) this process runs.
     *
     * @param concurrency 1 to 256 consumers in this process; 1 by default
     * @return a copy with it
     */
    public ShareConsumerOptions withConcurrency(int concurrency) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    /**
     * How many records a poll takes, applied together.
     *
     * @param maxPollRecords 1 to 1000 records per poll, applied together; 50 by default (1: one record at a time)
     * @return a copy with it
     */
    public ShareConsumerOptions withMaxPollRecords(int maxPollRecords) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    /**
     * How long a poll waits for records.
     *
     * @param pollTimeout positive; 100 ms by default
     * @return a copy with it
     */
    public ShareConsumerOptions withPollTimeout(Duration pollTimeout) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    /**
     * The largest record value read; a larger one is dead-lettered as oversized, unread.
     *
     * @param maxMessageBytes 64 B to 64 MiB; 256 KiB by default
     * @return a copy with it
     */
    public ShareConsumerOptions withMaxMessageBytes(int maxMessageBytes) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    /**
     * The pauses between attempts at a held record.
     *
     * @param backoff the pauses between attempts at a held record
     * @return a copy with it
     */
    public ShareConsumerOptions withBackoff(Backoff backoff) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    /**
     * How long close() lets a poll being applied finish.
     *
     * @param shutdownTimeout positive; 10 s by default
     * @return a copy with it
     */
    public ShareConsumerOptions withShutdownTimeout(Duration shutdownTimeout) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    /**
     * How long one record may keep failing while MongoDB applies others before it is dead-lettered.
     *
     * @param maxHold positive; 30 s by default
     * @return a copy with it
     */
    public ShareConsumerOptions withMaxHold(Duration maxHold) {
        return new ShareConsumerOptions(topic, deadLetterTopic, group, concurrency, maxPollRecords, pollTimeout,
                maxMessageBytes, backoff, shutdownTimeout, maxHold);
    }

    private static void requireName(String parameter, String value) {
        OptionRules.name(OPTIONS, parameter, value, "a name");
    }

    private static void range(String parameter, int value, int min, int max) {
        OptionRules.range(OPTIONS, parameter, value, min, max);
    }

    private static void positive(String parameter, Duration value) {
        OptionRules.positive(OPTIONS, parameter, value);
    }
}
