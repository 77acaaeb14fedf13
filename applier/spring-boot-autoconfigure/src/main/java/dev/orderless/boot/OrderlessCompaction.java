package dev.orderless.boot;

import dev.orderless.compaction.CompactionSchedule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Asks the {@link CompactionSchedule} whether a pass is due, at start and then every interval (at most
 * every minute), on a thread of its own. Every instance of the application asks; the schedule's lease
 * makes it one pass per interval across them. A failed pass is a WARN naming the collection, and the
 * next ask tries again. Counted in {@code orderless.compaction.passes}, {@code .documents},
 * {@code .tombstones_dropped} and {@code .failures}, tagged with the collection.
 */
public final class OrderlessCompaction extends TickedPasses {
    private final CompactionSchedule schedule;
    private final Counter passCount;
    private final Counter documents;
    private final Counter tombstones;

    OrderlessCompaction(CompactionSchedule schedule, String collection, MeterRegistry meters) {
        super("compaction of '" + collection + "'", "orderless-compaction-" + collection, schedule.interval(),
                "orderless.compaction", collection, meters);
        this.schedule = schedule;
        this.passCount = Counter.builder("orderless.compaction.passes").tag("collection", collection).register(meters);
        this.documents = Counter.builder("orderless.compaction.documents").tag("collection", collection).register(meters);
        this.tombstones = Counter.builder("orderless.compaction.tombstones_dropped").tag("collection", collection)
                .register(meters);
    }

    @Override
    boolean runIfDue() {
        return schedule.runIfDue().map(pass -> {
            passCount.increment();
            documents.increment(pass.documents());
            tombstones.increment(pass.tombstonesDropped());
            return true;
        }).orElse(false);
    }

    @Override
    void resumeSchedule() {
        schedule.resume();
    }

    @Override
    void stopSchedule() {
        schedule.stop();   // a pass under way ends after its current document
    }
}
