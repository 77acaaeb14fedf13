package dev.orderless.boot;

import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * A queue's depth for a health check, which must answer at once: the last value read, and a read in the
 * background when it is older than {@value #FRESH_SECONDS} s (one at a time, on a daemon thread that
 * ends when idle), so a broker that drops packets delays the figure, never the check. A figure older than
 * {@value #KNOWN_SECONDS} s (the broker has not answered since) is not reported at all.
 */
final class QueueDepth {
    private static final Logger log = LoggerFactory.getLogger(QueueDepth.class);
    static final long FRESH_SECONDS = 5;
    static final long KNOWN_SECONDS = 30;

    private final ConnectionFactory connectionFactory;
    private final String queue;
    private final ExecutorService reader;
    private final AtomicBoolean reading = new AtomicBoolean();
    private volatile OptionalLong depth = OptionalLong.empty();
    private volatile long readAtNanos;

    QueueDepth(ConnectionFactory connectionFactory, String queue) {
        this.connectionFactory = connectionFactory;
        this.queue = queue;
        ThreadPoolExecutor executor = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread thread = new Thread(r, "orderless-queue-depth-" + queue);
                    thread.setDaemon(true);
                    return thread;
                });
        this.reader = executor;
    }

    /** The last depth read, asking for a fresh one if it is stale; empty until the broker answered once. */
    OptionalLong get() {
        long age = System.nanoTime() - readAtNanos;
        boolean stale = depth.isEmpty() || age > TimeUnit.SECONDS.toNanos(FRESH_SECONDS);
        if (stale && reading.compareAndSet(false, true)) {
            reader.execute(this::read);
        }
        return age > TimeUnit.SECONDS.toNanos(KNOWN_SECONDS) ? OptionalLong.empty() : depth;
    }

    private void read() {
        try {
            QueueInformation info = new RabbitAdmin(connectionFactory).getQueueInfo(queue);
            depth = info == null ? OptionalLong.empty() : OptionalLong.of(info.getMessageCount());
            readAtNanos = System.nanoTime();
        } catch (RuntimeException e) {
            log.debug("queue '{}' depth unknown: {}", queue, e.toString());
            depth = OptionalLong.empty();
        } finally {
            reading.set(false);
        }
    }
}
