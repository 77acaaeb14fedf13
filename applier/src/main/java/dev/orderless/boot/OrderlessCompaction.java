package dev.orderless.boot;

import dev.orderless.compaction.CompactionSchedule;
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
 * next ask tries again.
 */
public final class OrderlessCompaction implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(OrderlessCompaction.class);

    private final CompactionSchedule schedule;
    private final String collection;
    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private Optional<ScheduledExecutorService> ticking = Optional.empty();

    OrderlessCompaction(CompactionSchedule schedule, String collection) {
        this.schedule = schedule;
        this.collection = collection;
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
            schedule.runIfDue().ifPresent(pass -> passes.incrementAndGet());
        } catch (RuntimeException e) {   // the thread must live on: the next ask tries again
            failures.incrementAndGet();
            log.warn("compaction of '{}' failed, tried again at the next ask: {}", collection, e.toString());
        } catch (Error e) {   // an escaping Error would cancel the schedule without a word
            failures.incrementAndGet();
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
