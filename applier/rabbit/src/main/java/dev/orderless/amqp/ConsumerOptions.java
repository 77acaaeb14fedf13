package dev.orderless.amqp;

import dev.orderless.InvalidConfigurationException;
import java.time.Duration;

/**
 * How an {@link OperationConsumer} consumes. Immutable: start from {@link #ofDefaults(String)} and
 * change with the {@code withX} copies; every value is checked here, with a message naming it.
 *
 * @param queue            the work queue
 * @param deadLetterQueue  where bad input goes, with its reason in the {@code x-orderless-reason} header
 * @param consumers        competing consumers (threads) on the queue
 * @param prefetch         unacked messages per consumer: two batches, so the next is on its way while one
 *                         is applied; Spring AMQP's default of 250 holds more back from the other
 *                         consumers and from a restart
 * @param maxMessageBytes  larger bodies are dead-lettered unread
 * @param retryInitial     first pause after a transient MongoDB failure
 * @param retryMax         longest pause between retries (the pause doubles up to it)
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
public record ConsumerOptions(String queue, String deadLetterQueue, int consumers, int prefetch, int maxMessageBytes,
                              Duration retryInitial, Duration retryMax, Duration shutdownTimeout, Duration maxHold,
                              int batchSize, Duration batchReceiveTimeout) {
    /**
     * Batches of 50: at 2 ms per MongoDB round trip a batch of 50 costs about 0.1 round trip per message
     * where one message costs 1.1; larger batches gain little more (see the benchmark's sweep) and hold
     * more messages back from the other consumers and from a restart.
     */
    public static final int DEFAULT_BATCH_SIZE = 50;
    public static final int DEFAULT_PREFETCH = 2 * DEFAULT_BATCH_SIZE;
    /** The prefetch of {@link #perMessage()}. */
    public static final int PER_MESSAGE_PREFETCH = 10;
    public static final Duration DEFAULT_BATCH_RECEIVE_TIMEOUT = Duration.ofMillis(20);
    public static final int DEFAULT_MAX_MESSAGE_BYTES = dev.orderless.message.Envelope.DEFAULT_MAX_BYTES;

    public ConsumerOptions {
        requireName("queue", queue);
        requireName("deadLetterQueue", deadLetterQueue);
        if (queue.equals(deadLetterQueue)) {
            throw new InvalidConfigurationException("consumer options: deadLetterQueue must differ from queue '" + queue + "'");
        }
        range("consumers", consumers, 1, 256);
        range("prefetch", prefetch, 1, 1000);
        range("maxMessageBytes", maxMessageBytes, 64, 64 * 1024 * 1024);
        positive("retryInitial", retryInitial);
        positive("retryMax", retryMax);
        positive("shutdownTimeout", shutdownTimeout);
        positive("maxHold", maxHold);
        range("batchSize", batchSize, 1, 1000);
        positive("batchReceiveTimeout", batchReceiveTimeout);
        if (batchSize > prefetch) {
            throw new InvalidConfigurationException("consumer options: batchSize (" + batchSize + ") must be at most"
                    + " prefetch (" + prefetch + "): a consumer cannot take more messages than the broker lets it hold;"
                    + " raise the prefetch, lower the batch with withBatch(size, receiveTimeout), or use perMessage()");
        }
        if (retryMax.compareTo(retryInitial) < 0) {
            throw new InvalidConfigurationException("consumer options: retryMax (" + retryMax
                    + ") must be at least retryInitial (" + retryInitial + ")");
        }
    }

    public static final Duration DEFAULT_MAX_HOLD = Duration.ofSeconds(30);

    /**
     * One consumer, batches of up to 50 messages gathered for about 20 ms, prefetch 100, 256 KiB bodies,
     * retries from 100 ms doubling to 5 s, 10 s to shut down, 30 s of hold for a message that fails while
     * others are applied.
     */
    public static ConsumerOptions ofDefaults(String queue) {
        return new ConsumerOptions(queue, queue + ".dlq", 1, DEFAULT_PREFETCH, DEFAULT_MAX_MESSAGE_BYTES,
                Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(10), DEFAULT_MAX_HOLD,
                DEFAULT_BATCH_SIZE, DEFAULT_BATCH_RECEIVE_TIMEOUT);
    }

    /**
     * One message, one apply, one ack, and prefetch 10 (whatever it was): at least one MongoDB round trip per
     * message before its ack. For a consumer whose every message must be acked the moment it is applied, or
     * to compare.
     */
    public ConsumerOptions perMessage() {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, PER_MESSAGE_PREFETCH, maxMessageBytes, retryInitial,
                retryMax, shutdownTimeout, maxHold, 1, batchReceiveTimeout);
    }

    /**
     * Up to {@code batchSize} messages per apply, waiting at most {@code receiveTimeout} for a batch to
     * fill; the prefetch is raised to {@code 2 x batchSize} if it is lower, so the next batch is on its way
     * while one is applied.
     */
    public ConsumerOptions withBatch(int batchSize, Duration receiveTimeout) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, Math.max(prefetch, Math.min(1000, 2 * batchSize)),
                maxMessageBytes, retryInitial, retryMax, shutdownTimeout, maxHold, batchSize, receiveTimeout);
    }

    public ConsumerOptions withMaxHold(Duration maxHold) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, prefetch, maxMessageBytes, retryInitial, retryMax,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    public ConsumerOptions withDeadLetterQueue(String deadLetterQueue) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, prefetch, maxMessageBytes, retryInitial, retryMax,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    public ConsumerOptions withConsumers(int consumers) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, prefetch, maxMessageBytes, retryInitial, retryMax,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    public ConsumerOptions withPrefetch(int prefetch) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, prefetch, maxMessageBytes, retryInitial, retryMax,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    public ConsumerOptions withMaxMessageBytes(int maxMessageBytes) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, prefetch, maxMessageBytes, retryInitial, retryMax,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    public ConsumerOptions withRetry(Duration initial, Duration max) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, prefetch, maxMessageBytes, initial, max,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    public ConsumerOptions withShutdownTimeout(Duration shutdownTimeout) {
        return new ConsumerOptions(queue, deadLetterQueue, consumers, prefetch, maxMessageBytes, retryInitial, retryMax,
                shutdownTimeout, maxHold, batchSize, batchReceiveTimeout);
    }

    private static void requireName(String parameter, String value) {
        if (value == null || value.isBlank()) {
            throw new InvalidConfigurationException("consumer options: " + parameter + " must be a queue name");
        }
    }

    private static void range(String parameter, int value, int min, int max) {
        if (value < min || value > max) {
            throw new InvalidConfigurationException("consumer options: " + parameter + " must be between " + min
                    + " and " + max + ", was " + value);
        }
    }

    private static void positive(String parameter, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new InvalidConfigurationException("consumer options: " + parameter + " must be a positive duration, was "
                    + value);
        }
    }
}
