package dev.orderless.history;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.internal.LeasedPasses;
import dev.orderless.lease.LeaseProvider;
import io.micrometer.core.instrument.Counter;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

/**
 * History retention of one collection: at most one pass per interval across every process that runs this
 * schedule, under the lease {@code history:<history collection>} (see {@link LeasedPasses} for the lease, the
 * record of the last pass and clock skew). A pass folds every record older than {@code keep} into its
 * entity's state ({@link History#retain}), keeping the lease alive between entities, and stops early if the
 * lease is lost or {@link #stop()} is called; a pass left half done is finished by the next.
 *
 * <p>Choose {@code keep} longer than any delivery can be late, as for compaction's grace (message TTL, retries
 * and back-off, the time a message may sit in the dead-letter queue): an operation recorded below its
 * entity's horizon makes that entity's history unknowable from then on. To keep everything forever, run no
 * schedule.
 */
public final class RetentionSchedule {
    private final History history;
    private final LeasedPasses passes;
    private final Duration keep;
    private final Clock clock;
    private final Counter runs;
    private final Counter folded;

    private RetentionSchedule(History history, LeasedPasses passes, Duration keep, Clock clock) {
        this.history = history;
        this.passes = passes;
        this.keep = keep;
        this.clock = clock;
        this.runs = Counter.builder("orderless.history.retention.passes").description("history retention passes run")
                .tag("collection", history.name()).register(history.options().meters());
        this.folded = Counter.builder("orderless.history.retention.folded")
                .description("history records folded into their entity's state and dropped")
                .tag("collection", history.name()).register(history.options().meters());
    }

    /**
     * A schedule for {@code history}, clocked by its options' clock; it runs nothing until asked ({@link #runIfDue()}).
     *
     * @param history  the history whose records are folded
     * @param leases   where the lease {@code history:<history collection>} is held
     * @param keep     how long a record stays a version of its own before it is folded
     * @param owner    this process, unique per incarnation
     * @param interval the least time between the starts of two passes
     * @return the schedule
     * @throws InvalidConfigurationException if {@code history} or {@code leases} is null, {@code owner} is empty, or
     *                                       {@code keep} or {@code interval} is not a positive duration
     */
    public static RetentionSchedule create(History history, LeaseProvider leases, Duration keep, String owner,
                                           Duration interval) {
        if (history == null) {
            throw new InvalidConfigurationException("history retention: history is required");
        }
        if (keep == null || keep.isNegative() || keep.isZero()) {
            throw InvalidConfigurationException.refused("history retention", "keep", "must be a positive duration, was "
                    + keep);
        }
        Clock clock = history.options().clock();
        return new RetentionSchedule(history, LeasedPasses.create("history retention", leases,
                "history:" + history.name(), owner, interval, clock), keep, clock);
    }

    /**
     * How long a record stays a version of its own before a pass folds it.
     *
     * @return the {@code keep} given to {@link #create}
     */
    public Duration keep() {
        return keep;
    }

    /**
     * The least time between the starts of two passes, across every process.
     *
     * @return the {@code interval} given to {@link #create}
     */
    public Duration interval() {
        return passes.interval();
    }

    /** Ends a pass under way after the entity it is on; later asks do nothing until {@link #resume()}. */
    public void stop() {
        passes.stop();
    }

    /** Undoes {@link #stop()}: later asks run a pass again when one is due. */
    public void resume() {
        passes.resume();
    }

    /**
     * Runs a pass if none began within the interval and no other process is running one; what it did.
     *
     * @return what the pass did, or empty if none ran (not due, stopped, or the lease held elsewhere)
     */
    public Optional<RetentionPass> runIfDue() {
        Optional<RetentionPass> pass = passes.runIfDue(keepGoing -> history.retain(clock.instant().minus(keep), keepGoing));
        pass.ifPresent(done -> {
            runs.increment();
            folded.increment(done.folded());
        });
        return pass;
    }
}
