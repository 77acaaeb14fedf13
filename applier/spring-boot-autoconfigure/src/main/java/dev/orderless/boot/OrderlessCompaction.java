package dev.orderless.boot;

import dev.orderless.boot.internal.PassTicker;
import dev.orderless.compaction.CompactionSchedule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.context.SmartLifecycle;

/**
 * Asks the {@link CompactionSchedule} whether a pass is due, at start and then every interval (at most
 * every minute), on a thread of its own. Every instance of the application asks; the schedule's lease
 * makes it one pass per interval across them. A failed pass is a WARN naming the collection, and the
 * next ask tries again. Counted in {@code orderless.compaction.passes}, {@code .documents},
 * {@code .tombstones_dropped} and {@code .failures}, tagged with the collection.
 */
public final class OrderlessCompaction implements SmartLifecycle {
    private final CompactionSchedule schedule;
    private final AtomicLong passes = new AtomicLong();
    private final Counter passCount;
    private final Counter documents;
    private final Counter tombstones;
    private final PassTicker ticker;

    OrderlessCompaction(CompactionSchedule schedule, String collection, MeterRegistry meters) {
        this.schedule = schedule;
        this.passCount = Counter.builder("orderless.compaction.passes").tag("collection", collection).register(meters);
        this.documents = Counter.builder("orderless.compaction.documents").tag("collection", collection).register(meters);
        this.tombstones = Counter.builder("orderless.compaction.tombstones_dropped").tag("collection", collection)
                .register(meters);
        Counter failureCount = Counter.builder("orderless.compaction.failures").tag("collection", collection)
                .register(meters);
        this.ticker = new PassTicker("compaction of '" + collection + "'", "orderless-compaction-" + collection,
                schedule.interval(), this::ask, failureCount::increment);
    }

    @Override
    public void start() {
        schedule.resume();
        ticker.start();
    }

    private void ask() {
        schedule.runIfDue().ifPresent(pass -> {
            passes.incrementAndGet();
            passCount.increment();
            documents.increment(pass.documents());
            tombstones.increment(pass.tombstonesDropped());
        });
    }

    @Override
    public void stop() {
        ticker.stop(schedule::stop);   // a pass under way ends after its current document
    }

    @Override
    public boolean isRunning() {
        return ticker.isRunning();
    }

    /** Passes this instance ran. */
    public long passes() {
        return passes.get();
    }

    /** Asks that failed. */
    public long failures() {
        return ticker.failures();
    }
}
