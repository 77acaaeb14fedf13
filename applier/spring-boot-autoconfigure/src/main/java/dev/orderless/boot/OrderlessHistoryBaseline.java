package dev.orderless.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.history.History;
import dev.orderless.history.HistoryBaseline;
import dev.orderless.history.HistoryBaseline.Begun;
import dev.orderless.history.HistoryBaseline.Start;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link HistoryBaseline}, decided as this bean is made, before the consumer starts, by
 * {@code orderless.history.baseline.enabled} ({@link #PROPERTY}):
 * <ul>
 *   <li>unset: an empty collection with an empty history needs no baseline (complete at once); a collection with
 *       documents and an empty history was consumed without it, and the baseline runs; a collection with documents
 *       and a history with records but no baseline ever begun cannot be told apart (a history on since the first
 *       write, or one turned on over existing data), so the start fails, naming the property and both choices;
 *   <li>{@code true}: the baseline runs (complete at once on an empty collection);
 *   <li>{@code false}: the history has been on since the collection's first write: the baseline is recorded complete
 *       without reading anything, so that no recorded version becomes unknowable.
 * </ul>
 * A baseline that began in any instance is resumed whatever the property says ({@code false} is then refused).
 * While one is under way, it runs on a thread of its own beside the consumer, asked every {@link #INTERVAL} until
 * a pass in any instance has reached the end (a pass another instance is running, one that stopped or failed, is
 * resumed where it left off). A failed pass is a WARN naming the history, counted in
 * {@code orderless.history.baseline.failures}, and the next ask tries again.
 */
public final class OrderlessHistoryBaseline extends TickedPasses {
    /** How often an instance asks while the baseline is not complete. */
    static final Duration INTERVAL = Duration.ofMinutes(1);
    static final String PROPERTY = "orderless.history.baseline.enabled";
    private static final Logger log = LoggerFactory.getLogger(OrderlessHistoryBaseline.class);

    private final Optional<HistoryBaseline> baseline;

    /**
     * @param baseline empty where the history does not know its live collection (a History bean of the application's
     *                 own) and {@code enabled} is false: nothing to check, nothing to run
     * @param enabled  {@code orderless.history.baseline.enabled}, if set
     */
    OrderlessHistoryBaseline(Optional<HistoryBaseline> baseline, Optional<Boolean> enabled, History history,
                             MeterRegistry meters) {
        super("history baseline of '" + name(history) + "'", "orderless-history-baseline-" + name(history),
                baseline.map(HistoryBaseline::interval).orElse(INTERVAL), "orderless.history.baseline", name(history),
                meters);
        this.baseline = baseline;
        if (baseline.isPresent()) {
            begin(enabled, history);
        }
    }

    private static String name(History history) {
        return history.collection().getNamespace().getCollectionName();
    }

    /** Decides before any consumer starts (they start with the context, after every bean is made). */
    private static void begin(Optional<Boolean> enabled, History history) {
        Start start = enabled.map(on -> on ? Start.RUN : Start.DECLARE_COMPLETE).orElse(Start.DETECT);
        Begun begun;
        try {
            begun = history.beginBaseline(start);
        } catch (InvalidConfigurationException e) {
            if (start != Start.DECLARE_COMPLETE) {
                throw e;
            }
            throw new InvalidConfigurationException(PROPERTY + "=false is refused: " + e.getMessage()
                    + " (remove the setting)", e);
        }
        String live = history.live().orElseThrow().getNamespace().getCollectionName();
        if (begun == Begun.UNDECIDED) {
            throw new InvalidConfigurationException(PROPERTY + " must be set: '" + live + "' has documents and '"
                    + name(history) + "' has records, but no baseline ever began: false if the history has been on since"
                    + " the collection's first write (nothing is read, every recorded version stays known), true if it"
                    + " was turned on over existing data (each document is taken in; its versions below its latest seq"
                    + " become unknowable)");
        }
        log.info("history baseline of '{}': {}", name(history), begun == Begun.COMPLETE ? "complete"
                : "under way: the documents of '" + live + "' are taken in beside the consumer");
    }

    @Override
    boolean runIfDue() {
        // nothing, with no round trip, once it is known complete
        return baseline.map(b -> b.runIfDue().isPresent()).orElse(false);
    }

    @Override
    void resumeSchedule() {
        baseline.ifPresent(HistoryBaseline::resume);
    }

    @Override
    void stopSchedule() {
        baseline.ifPresent(HistoryBaseline::stop);   // a pass under way ends after its current entity, and the next resumes it
    }

    /** True once this instance learnt that the baseline is complete. */
    public boolean complete() {
        return baseline.map(HistoryBaseline::complete).orElse(false);
    }

    /** {@code complete}, {@code under way}, or {@code off} (a history that does not know its live collection). */
    String state() {
        return baseline.isEmpty() ? "off" : complete() ? "complete" : "under way";
    }
}
