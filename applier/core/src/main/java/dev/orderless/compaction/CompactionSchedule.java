package dev.orderless.compaction;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.internal.LeasedPasses;
import dev.orderless.lease.LeaseProvider;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tombstone compaction of one collection at most once per interval across every process that runs this
 * schedule, however many there are and however their clocks tick, under the lease
 * {@code compaction:<collection>} (see {@link LeasedPasses} for the lease, the record of the last pass and
 * clock skew). A pass compacts every document with tombstones older than the grace, keeping the lease alive
 * between documents, and stops early if the lease is lost or {@link #stop()} is called. A process that dies
 * mid-pass leaves the rest to the next interval: compaction is guarded per document and harmless to repeat
 * or to leave half done.
 */
public final class CompactionSchedule {
    private static final Logger log = LoggerFactory.getLogger(CompactionSchedule.class);
    static final String LAST_RUN = LeasedPasses.LAST_RUN;

    private final TombstoneCompactor compactor;
    private final LeasedPasses passes;
    private final String resource;

    private CompactionSchedule(TombstoneCompactor compactor, LeasedPasses passes, String resource) {
        this.compactor = compactor;
        this.passes = passes;
        this.resource = resource;
    }

    /**
     * A schedule for {@code compactor}; it runs nothing until asked ({@link #runIfDue()}).
     *
     * @param compactor  compacts the collection; its grace, not the interval, decides which tombstones go
     * @param leases     where the lease {@code compaction:<collection>} is held
     * @param collection names the lease: one schedule per collection across the cluster
     * @param owner      this process, unique per incarnation
     * @param interval   the least time between the starts of two passes
     * @param clock      measures the interval and records when a pass began
     * @return the schedule
     * @throws InvalidConfigurationException if {@code compactor}, {@code leases} or {@code clock} is null,
     *                                       {@code collection} or {@code owner} is empty, or {@code interval} is not
     *                                       a positive duration
     */
    public static CompactionSchedule create(TombstoneCompactor compactor, LeaseProvider leases, String collection,
                                            String owner, Duration interval, Clock clock) {
        if (compactor == null) {
            throw new InvalidConfigurationException("compaction schedule: compactor is required");
        }
        if (collection == null || collection.isBlank()) {
            throw InvalidConfigurationException.refused("compaction schedule", "collection", "must not be empty");
        }
        String resource = "compaction:" + collection;
        return new CompactionSchedule(compactor,
                LeasedPasses.create("compaction schedule", leases, resource, owner, interval, clock), resource);
    }

    /**
     * The least time between the starts of two passes, across every process.
     *
     * @return the {@code interval} given to {@link #create}
     */
    public Duration interval() {
        return passes.interval();
    }

    /** Ends a pass under way after the document it is on; later asks do nothing until {@link #resume()}. */
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
     * @throws dev.orderless.TransientException if MongoDB is down; the next pass resumes the work
     */
    public Optional<TombstoneCompactor.Compaction> runIfDue() {
        return passes.runIfDue(keepGoing -> {
            TombstoneCompactor.Compaction done = compactor.compactAll(keepGoing);
            log.info("{}: compacted {} documents, {} tombstones dropped, {} counters' increments folded", resource,
                    done.documents(), done.tombstonesDropped(), done.incrementsFolded());
            return done;
        });
    }
}
