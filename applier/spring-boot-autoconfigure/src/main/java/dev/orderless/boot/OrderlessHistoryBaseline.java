package dev.orderless.boot;

import dev.orderless.history.HistoryBaseline;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link HistoryBaseline} from start-up, on a thread of its own beside the consumer, until a pass in
 * any instance has reached the end: at start, then every {@link #INTERVAL} while it is not (a pass another
 * instance is running, one that stopped or failed, is resumed where it left off). On an empty collection it is
 * complete as soon as this bean is made, before the consumer starts: nothing to take in. A failed pass is a
 * WARN naming the history, counted in {@code orderless.history.baseline.failures}, and the next ask tries again.
 */
public final class OrderlessHistoryBaseline extends TickedPasses {
    /** How often an instance asks while the baseline is not complete. */
    static final Duration INTERVAL = Duration.ofMinutes(1);
    private static final Logger log = LoggerFactory.getLogger(OrderlessHistoryBaseline.class);

    private final HistoryBaseline baseline;

    OrderlessHistoryBaseline(HistoryBaseline baseline, String history, MeterRegistry meters) {
        super("history baseline of '" + history + "'", "orderless-history-baseline-" + history, baseline.interval(),
                "orderless.history.baseline", history, meters);
        this.baseline = baseline;
        try {
            // before any consumer starts (they start with the context, after every bean is made): on an empty
            // collection, none of their first documents must be taken in as if it predated the history
            baseline.completeIfEmpty();
        } catch (RuntimeException e) {
            log.warn("history baseline of '{}': could not tell whether the collection is empty ({}); the baseline runs"
                    + " from start-up all the same", history, e.toString());
        }
    }

    @Override
    boolean runIfDue() {
        return baseline.runIfDue().isPresent();   // nothing, with no round trip, once it is known complete
    }

    @Override
    void resumeSchedule() {
        baseline.resume();
    }

    @Override
    void stopSchedule() {
        baseline.stop();   // a pass under way ends after its current entity, and the next resumes it
    }

    /** True once this instance learnt that a pass has reached the end. */
    public boolean complete() {
        return baseline.complete();
    }
}
