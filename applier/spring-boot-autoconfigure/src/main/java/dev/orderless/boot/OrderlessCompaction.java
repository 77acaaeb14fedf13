package dev.orderless.boot;

import dev.orderless.compaction.CompactionSchedule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Asks the {@link CompactionSchedule} whether a pass is due, at start and then every interval (at most
 * every minute), on a thread of its own. Every instance of the application asks; the schedule's lease
 * makes it one pass per interval across them. A failed pass is a WARN naming the collection, and the
 * next ask tries again. Counted in {@code orderless.compaction.passes}, {@code .documents},
 * {@code .tombstones_dropped} and {@code .failures}, tagged with the collection.
 */
public final class OrderlessCompaction implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(OrderlessCompaction.class);

    private final CompactionSchedule schedule;
    private final String collection;
    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final Counter passCount;
    private final Counter documents;
    private final Counter tombstones;
    private final Counter failureCount;
    private Optional<ScheduledExecutorService> ticking = Optional.empty();

    OrderlessCompaction(CompactionSchedule schedule, String collection, MeterRegistry meters) {
        this.schedule = schedule;
        this.collection = collection;
        this.passCount = Counter.builder("orderless.compaction.passes").tag("collection", collection).register(meters);
        this.documents = Counter.builder("orderless.compaction.documents").tag("collection", collection).register(meters);
        this.tombstones = Counter.builder("orderless.compaction.tombstones_dropped").tag("collection", collection)
                .register(meters);
        this.failureCount = Counter.builder("orderless.compaction.failures").tag("collection", collection).register(meters);
    }

    @Override
    public synchronized void start() {
        if (ticking.isEmpty()) {
            schedule.resume();
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread thread = new Thread(r, "orderless-compaction-" + collection);
                thread.setDaemon(true);
                return thread;
            });
            long every = Math.min(schedule.interval().toMillis(), Duration.ofMinutes(1).toMillis());
            executor.scheduleWithFixedDelay(this::ask, 0, every, TimeUnit.MILLISECONDS);
            ticking = Optional.of(executor);
        }
    }

    private void ask() {
        try {
            schedule.runIfDue().ifPresent(pass -> {
                passes.incrementAndGet();
                passCount.increment();
                documents.increment(pass.documents());
                tombstones.increment(pass.tombstonesDropped());
            });
        } catch (RuntimeException e) {   // the thread must live on: the next ask tries again
            failures.incrementAndGet();
            failureCount.increment();
            log.warn("compaction of '{}' failed, tried again at the next ask: {}", collection, e.toString());
        } catch (Error e) {   // an escaping Error would cancel the schedule without a word
            failures.incrementAndGet();
            failureCount.increment();
            log.error("compaction of '{}' failed with {}, tried again at the next ask", collection, e.toString(), e);
        }
    }

    @Override
    public synchronized void stop() {
        ticking.ifPresent(executor -> {
            schedule.stop();     // a pass under way ends after its current document, without an interrupt
            executor.shutdown();
            try {
                if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                    log.warn("compaction of '{}' still on one document after 10 s; leaving it", collection);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        ticking = Optional.empty();
    }

    @Override
    public synchronized boolean isRunning() {
        return ticking.isPresent();
    }

    /** Passes this instance ran. */
    public long passes() {
        return passes.get();
    }

    /** Asks that failed. */
    public long failures() {
        return failures.get();
    }
}
