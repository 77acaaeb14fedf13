package dev.orderless.amqp;

import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.consume.internal.OptionRules;
import java.time.Duration;

/**
 * How an {@link OperationConsumer} consumes. Immutable: start from {@link #ofDefaults(String)} and
 * change with the {@code withX} copies; every value is checked here, with a message naming it
 * ({@link InvalidConfigurationException#setting()} is the component's name, e.g. {@code "concurrency"}).
 *
 * @param queue            the work queue
 * @param deadLetterQueue  where bad input goes, with its reason in the {@code x-orderless-reason} header;
 *                         by default {@link #defaultDeadLetterQueue(String)}
 * @param concurrency      competing consumers (threads) on the queue
 * @param prefetch         unacked messages per consumer: two batches, so the next is on its way while one
 *                         is applied; Spring AMQP's default of 250 holds more back from the other
 *                         consumers and from a restart
 * @param maxMessageBytes  larger bodies are dead-lettered unread
 * @param backoff          the pauses between retries after a transient MongoDB failure: doubling from
 *                         {@code initial} to {@code max}, each shortened by a random part of at most
 *                         {@code jitter} of it so that consumers do not retry in lockstep
 * @param shutdownTimeout  how long stop() lets in-flight messages finish before their channels close
 *                         (the broker then requeues whatever was not acked)
 * @param maxHold          how long one message may keep failing transiently while MongoDB is applying
 *                         others before it is dead-lettered as {@code held too long}; while MongoDB is down
 *                         for everyone a message holds without limit
 * @param batchSize        up to this many messages taken together, their first writes in one bulk write
 *                         ({@link dev.orderless.apply.GuardedApplier#applyAll}), each settled on its own;
 *                         1: one message, one apply, one ack ({@link #perMessage()}); at most {@code prefetch}
 * @param batchReceiveTimeout how long a consumer gathers a batch before applying what it has, and how long
 *                         each poll for the next message waits: on a quiet queue a message waits for company
 *                         about this long, at most twice it
 */
public record ConsumerOptions(String queue, String deadLetterQueue, int concurrency, int prefetch, int maxMessageBytes,
                              Backoff backoff, Duration shutdownTimeout, Duration maxHold,
                              int batchSize, Duration batchReceiveTimeout) {
    private static final String OPTIONS = "consumer options";
    /**
     * Batches of 50: at 2 ms per MongoDB round trip a batch of 50 costs about 0.1 round trip per message
     * where one message costs 1.1; larger batches gain little more (see the benchmark's sweep) and hold
     * more messages back from the other consumers and from a restart.
     */
    public static final int DEFAULT_BATCH_SIZE = 50;
    /**
     * Unacked messages per consumer thread by default: two batches, so the next is on its way while one is applied
     * (Spring AMQP's 250 would hold more back from the other consumers and from a restart).
     */
    public static final int DEFAULT_PREFETCH = 2 * DEFAULT_BATCH_SIZE;
    /** The prefetch of {@link #perMessage()}. */
    public static final int PER_MESSAGE_PREFETCH = 10;
    private static final Duration DEFAULT_BATCH_RECEIVE_TIMEOUT = Duration.ofMillis(20);
    private static final Duration DEFAULT_MAX_HOLD = Duration.ofSeconds(30);
    /** From 100 ms doubling to 5 s, each pause between half of it and all of it. */
    private static final Backoff DEFAULT_BACKOFF = Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(5));
    private static final int DEFAULT_MAX_MESSAGE_BYTES = dev.orderless.message.Envelope.DEFAULT_MAX_BYTES;

    public ConsumerOptions {
        requireName("queue", queue);
        requireName("deadLetterQueue", deadLetterQueue);
        if (queue.equals(deadLetterQueue)) {
            throw InvalidConfigurationException.refused(OPTIONS, "deadLetterQueue", "must differ from queue '" + queue + "'");
        }
        range("concurrency", concurrency, 1, 256);
        range("prefetch", prefetch, 1, 1000);
        range("maxMessageBytes", maxMessageBytes, 64, 64 * 1024 * 1024);
        if (backoff == null) {
            throw InvalidConfigurationException.refused(OPTIONS, "backoff", "must be set, e.g. Backoff.of(initial, max)");
        }
        positive("shutdownTimeout", shutdownTimeout);
        positive("maxHold", maxHold);
        range("batchSize", batchSize, 1, 1000);
        positive("batchReceiveTimeout", batchReceiveTimeout);
        if (batchSize > prefetch) {
            throw InvalidConfigurationException.refused(OPTIONS, "batchSize", "(" + batchSize + ") must be at most"
                    + " prefetch (" + prefetch + "): a consumer cannot take more messages than the broker lets it hold;"
                    + " raise the prefetch or lower the batch size (1: one message at a time)");
        }
    }

    /** The dead-letter queue of {@code queue} unless one is named: {@code <queue>.dlq}. */
    public static String defaultDeadLetterQueue(String queue) {
        return queue + ".dlq";
    }

    /**
     * One consumer, batches of up to 50 messages gathered for about 20 ms, prefetch 100, 256 KiB bodies,
     * retries from 100 ms doubling to 5 s (each pause between half of it and all of it), 10 s to shut down,
     * 30 s of hold for a message that fails while others are applied.
     */
    public static ConsumerOptions ofDefaults(String queue) {
        return new ConsumerOptions(queue, defaultDeadLetterQueue(queue), 1, DEFAULT_PREFETCH, DEFAULT_MAX_MESSAGE_BYTES,
                DEFAULT_BACKOFF, Duration.ofSeconds(10), DEFAULT_MAX_HOLD,
                DEFAULT_BATCH_SIZE, DEFAULT_BATCH_RECEIVE_TIMEOUT);
    }

    /**
     * One message, one apply, one ack, and prefetch 10 (whatever it was): at least one MongoDB round trip per
     * message before its ack. For a consumer whose every message must be acked the moment it is applied, or
     * to compare.
     */
    public ConsumerOptions perMessage() {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, PER_MESSAGE_PREFETCH, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, 1, batchReceiveTimeout);
    }

    /**
     * Up to {@code batchSize} messages per apply, waiting at most {@code receiveTimeout} for a batch to
     * fill; the prefetch is raised to {@code 2 x batchSize} if it is lower, so the next batch is on its way
     * while one is applied.
     */
    public ConsumerOptions withBatch(int batchSize, Duration receiveTimeout) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, Math.max(prefetch, Math.min(1000, 2 * batchSize)),
                maxMessageBytes, backoff, shutdownTimeout, maxHold, batchSize, receiveTimeout);
    }

    /**
     * How long one message may keep failing transiently while MongoDB applies others before it is dead-lettered as
     * {@code held too long}; while MongoDB is down for everyone a message is retried without limit.
     *
     * @param maxHold positive; 30 s by default
     * @return a copy with it
     */
    public ConsumerOptions withMaxHold(Duration maxHold) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, prefetch, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    /**
     * Where bad input goes, with its reason in a header.
     *
     * @param deadLetterQueue a queue other than the work queue; {@code <queue>.dlq} by default
     * @return a copy with it
     */
    public ConsumerOptions withDeadLetterQueue(String deadLetterQueue) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, prefetch, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    /**
     * How many competing consumers (threads) take messages from the queue.
     *
     * @param concurrency 1 to 256; 1 by default
     * @return a copy with it
     */
    public ConsumerOptions withConcurrency(int concurrency) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, prefetch, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    /**
     * How many unacked messages the broker lets each consumer thread hold.
     *
     * @param prefetch 1 to 1000, at least the batch size; {@link #DEFAULT_PREFETCH} by default
     * @return a copy with it
     */
    public ConsumerOptions withPrefetch(int prefetch) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, prefetch, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    /**
     * The largest body read: a larger one is dead-lettered as {@code oversized}, unread.
     *
     * @param maxMessageBytes 64 B to 64 MiB; 256 KiB by default
     * @return a copy with it
     */
    public ConsumerOptions withMaxMessageBytes(int maxMessageBytes) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, prefetch, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    /** The pauses between retries after a transient MongoDB failure. */
    public ConsumerOptions withBackoff(Backoff backoff) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, prefetch, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    /**
     * How long closing lets messages being applied finish before their channels close (the broker then requeues
     * what was not acked).
     *
     * @param shutdownTimeout positive; 10 s by default
     * @return a copy with it
     */
    public ConsumerOptions withShutdownTimeout(Duration shutdownTimeout) {
        return new ConsumerOptions(queue, deadLetterQueue, concurrency, prefetch, maxMessageBytes, backoff,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    private static void requireName(String parameter, String value) {
        OptionRules.name(OPTIONS, parameter, value, "a queue name");
    }

    private static void range(String parameter, int value, int min, int max) {
        OptionRules.range(OPTIONS, parameter, value, min, max);
    }

    private static void positive(String parameter, Duration value) {
        OptionRules.positive(OPTIONS, parameter, value);
    }
}
