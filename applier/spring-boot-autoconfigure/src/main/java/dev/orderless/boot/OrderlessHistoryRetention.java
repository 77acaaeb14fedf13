package dev.orderless.boot;

import dev.orderless.history.RetentionSchedule;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Asks the {@link RetentionSchedule} whether a pass is due, at start and then every interval (at most every
 * minute), on a thread of its own. Every instance of the application asks; the schedule's lease makes it one
 * pass per interval across them. A failed pass is a WARN naming the history, counted in
 * {@code orderless.history.retention.failures}, and the next ask tries again.
 */
public final class OrderlessHistoryRetention extends TickedPasses {
    private final RetentionSchedule schedule;

    OrderlessHistoryRetention(RetentionSchedule schedule, String history, MeterRegistry meters) {
        super("history retention of '" + history + "'", "orderless-history-" + history, schedule.interval(),
                "orderless.history.retention", history, meters);
        this.schedule = schedule;
    }

    @Override
    boolean runIfDue() {
        return schedule.runIfDue().isPresent();
    }

    @Override
    void resumeSchedule() {
        schedule.resume();
    }

    @Override
    void stopSchedule() {
        schedule.stop();   // a pass under way ends after its current entity
    }
}
