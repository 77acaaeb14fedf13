package dev.orderless.boot;

import dev.orderless.boot.internal.PassTicker;
import dev.orderless.history.RetentionSchedule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.context.SmartLifecycle;

/**
 * Asks the {@link RetentionSchedule} whether a pass is due, at start and then every interval (at most every
 * minute), on a thread of its own. Every instance of the application asks; the schedule's lease makes it one
 * pass per interval across them. A failed pass is a WARN naming the history, counted in
 * {@code orderless.history.retention.failures}, and the next ask tries again.
 */
public final class OrderlessHistoryRetention implements SmartLifecycle {
    private final RetentionSchedule schedule;
    private final AtomicLong passes = new AtomicLong();
    private final PassTicker ticker;

    OrderlessHistoryRetention(RetentionSchedule schedule, String history, MeterRegistry meters) {
        this.schedule = schedule;
        Counter failures = Counter.builder("orderless.history.retention.failures")
                .description("history retention passes that failed").tag("collection", history).register(meters);
        this.ticker = new PassTicker("history retention of '" + history + "'", "orderless-history-" + history,
                schedule.interval(), this::ask, failures::increment);
    }

    private void ask() {
        schedule.runIfDue().ifPresent(pass -> passes.incrementAndGet());
    }

    @Override
    public void start() {
        schedule.resume();
        ticker.start();
    }

    @Override
    public void stop() {
        ticker.stop(schedule::stop);   // a pass under way ends after its current entity
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

    /** Why the last ask failed; empty once one succeeded. */
    public Optional<String> lastFailure() {
        return ticker.lastFailure();
    }
}
