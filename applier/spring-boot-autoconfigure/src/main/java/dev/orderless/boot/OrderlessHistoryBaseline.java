package dev.orderless.boot;

import dev.orderless.boot.internal.PassTicker;
import dev.orderless.history.HistoryBaseline;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the {@link HistoryBaseline} from start-up, on a thread of its own beside the consumer, until a pass in
 * any instance has reached the end: at start, then every {@link #INTERVAL} while it is not (a pass another
 * instance is running, one that stopped or failed, is resumed where it left off). On an empty collection it is
 * complete as soon as this bean is made, before the consumer starts: nothing to take in. A failed pass is a WARN naming the history, counted in
 * {@code orderless.history.baseline.failures}, and the next ask tries again.
 */
public final class OrderlessHistoryBaseline implements SmartLifecycle {
    /** How often an instance asks while the baseline is not complete. */
    static final Duration INTERVAL = Duration.ofMinutes(1);
    private static final Logger log = LoggerFactory.getLogger(OrderlessHistoryBaseline.class);

    private final HistoryBaseline baseline;
    private final AtomicLong passes = new AtomicLong();
    private final PassTicker ticker;

    OrderlessHistoryBaseline(HistoryBaseline baseline, String history, MeterRegistry meters) {
        this.baseline = baseline;
        try {
            // before any consumer starts (they start with the context, after every bean is made): on an empty
            // collection, none of their first documents must be taken in as if it predated the history
            baseline.completeIfEmpty();
        } catch (RuntimeException e) {
            log.warn("history baseline of '{}': could not tell whether the collection is empty ({}); the baseline runs"
                    + " from start-up all the same", history, e.toString());
        }
        Counter failures = Counter.builder("orderless.history.baseline.failures")
                .description("history baseline passes that failed").tag("collection", history).register(meters);
        this.ticker = new PassTicker("history baseline of '" + history + "'", "orderless-history-baseline-" + history,
                baseline.interval(), this::ask, failures::increment);
    }

    private void ask() {
        baseline.runIfDue().ifPresent(pass -> passes.incrementAndGet());   // nothing once it is known complete
    }

    @Override
    public void start() {
        baseline.resume();
        ticker.start();
    }

    @Override
    public void stop() {
        ticker.stop(baseline::stop);   // a pass under way ends after its current entity, and the next resumes it
    }

    @Override
    public boolean isRunning() {
        return ticker.isRunning();
    }

    /** True once this instance learnt that a pass has reached the end. */
    public boolean complete() {
        return baseline.complete();
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
