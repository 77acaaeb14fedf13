package dev.orderless.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
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
 * Where MongoDB does not answer as the bean is made, the application starts anyway: the decision waits for MongoDB
 * ({@link #waitingFor()}, which the history's health shows, DOWN, and which holds back the consumer: it starts once
 * the decision is made, so that none of its writes counts as data from before the history), asked again every
 * {@link #UNDECIDED_EVERY}; a refusal found then (the property must be set) is an ERROR and stays in
 * {@link #waitingFor()} until a restart with the property set. While a baseline is under way, it runs on a thread of
 * its own beside the consumer, asked every {@link #INTERVAL} until a pass in any instance has reached the end (a pass
 * another instance is running, one that stopped or failed, is resumed where it left off). A failed pass is a WARN
 * naming the history, counted in {@code orderless.history.baseline.failures}, and the next ask tries again.
 */
public final class OrderlessHistoryBaseline extends TickedPasses {
    /** How often an instance asks while the baseline is not complete. */
    static final Duration INTERVAL = Duration.ofMinutes(1);
    /**
     * How often an instance asks while how the history starts is not decided: soon, as the consumer waits for it; an
     * ask while MongoDB is away waits the driver's server selection timeout first anyway.
     */
    static final Duration UNDECIDED_EVERY = Duration.ofSeconds(1);
    static final String PROPERTY = "orderless.history.baseline.enabled";
    private static final Logger log = LoggerFactory.getLogger(OrderlessHistoryBaseline.class);

    private final HistoryBaseline baseline;
    private final History history;
    private final Start start;
    private volatile Optional<String> waitingFor = Optional.empty();

    /**
     * Decides how the history starts, unless MongoDB does not answer (then {@link #waitingFor()} says so).
     *
     * @param baseline the runner of the history's baseline; its history knows its live collection
     * @param enabled  {@code orderless.history.baseline.enabled}, if set
     * @throws InvalidConfigurationException if the property must be set, or {@code false} is refused
     */
    OrderlessHistoryBaseline(HistoryBaseline baseline, Optional<Boolean> enabled, History history,
                             MeterRegistry meters) {
        super("history baseline of '" + name(history) + "'", "orderless-history-baseline-" + name(history),
                baseline.interval(), "orderless.history.baseline", name(history), meters);
        this.baseline = baseline;
        this.history = history;
        this.start = enabled.map(on -> on ? Start.RUN : Start.DECLARE_COMPLETE).orElse(Start.DETECT);
        try {
            decide();
        } catch (TransientException e) {   // a refusal fails the start; MongoDB away does not, as without history
            waitingFor = Optional.of(mongoDown(e));
            log.warn("{}; the application starts, the consumer waits, and the history's health is DOWN until then",
                    waitingFor.get());
        }
    }

    private static String name(History history) {
        return history.collection().getNamespace().getCollectionName();
    }

    private String mongoDown(TransientException e) {
        return "MongoDB, to decide how the history '" + name(history) + "' starts (" + PROPERTY + "), asked again every "
                + UNDECIDED_EVERY.toSeconds() + " s: " + e.getMessage();
    }

    /** Decides before any consumer starts (they start with the context, after every bean is made, or once decided). */
    private void decide() {
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
        waitingFor = Optional.empty();
        log.info("history baseline of '{}': {}", name(history), begun == Begun.COMPLETE ? "complete"
                : "under way: the documents of '" + live + "' are taken in beside the consumer");
    }

    /** Decides now, if it waits for that: true once decided; what it waits for, said once per reason, if not. */
    private boolean decided() {
        if (waitingFor.isEmpty()) {
            return true;
        }
        Optional<String> before = waitingFor;
        try {
            decide();
            log.info("history baseline of '{}' decided after waiting for {}", name(history), before.get());
            return true;
        } catch (TransientException e) {
            waitingFor = Optional.of(mongoDown(e));
        } catch (InvalidConfigurationException e) {   // found after the start: nobody to throw to
            waitingFor = Optional.of(e.getMessage());
            if (!waitingFor.equals(before)) {
                log.error("history of '{}' cannot start, and neither can the consumer: {}; restart with it set",
                        name(history), e.getMessage());
            }
        }
        return false;
    }

    @Override
    boolean runIfDue() {
        // nothing, with no round trip, once it is known complete
        return decided() && baseline.runIfDue().isPresent();
    }

    @Override
    Duration nextAskIn(Duration interval) {
        return waitingFor.isPresent() ? UNDECIDED_EVERY : interval;
    }

    @Override
    void resumeSchedule() {
        baseline.resume();
    }

    @Override
    void stopSchedule() {
        baseline.stop();   // a pass under way ends after its current entity, and the next resumes it
    }

    /** True once this instance learnt that the baseline is complete. */
    public boolean complete() {
        return waitingFor.isEmpty() && baseline.complete();
    }

    /**
     * What deciding how the history starts waits for, if it is not decided yet: MongoDB, which did not answer, or the
     * property, where the decision found it must be set. The consumer does not start meanwhile.
     *
     * @return why the history's start is not decided, or empty once it is
     */
    public Optional<String> waitingFor() {
        return waitingFor;
    }

    /** {@code complete}, {@code under way}, or {@code not decided} (see {@link #waitingFor()}). */
    String state() {
        return waitingFor.isPresent() ? "not decided" : complete() ? "complete" : "under way";
    }
}
