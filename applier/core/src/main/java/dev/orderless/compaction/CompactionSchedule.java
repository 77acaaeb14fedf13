package dev.orderless.compaction;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.TombstoneCompactor;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseProvider;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tombstone compaction of one collection at most once per interval across every process that runs this
 * schedule, however many there are and however their clocks tick. The lease document remembers when the
 * last pass began:
 *
 * <pre>
 * { _id: "compaction:students", owner, expiresAt, fence, position: { lastRun: ISODate(...) } }
 * </pre>
 *
 * {@link #runIfDue()}:
 * <ol>
 *   <li>Try the lease {@code compaction:<collection>}; held by another process: nothing to do (empty).
 *   <li>If the last pass began less than one interval ago: release, nothing to do (empty).
 *   <li>Record this pass's start in the lease (so even if the lease lapsed during the pass, nobody starts
 *       another before the interval is over), compact every document with tombstones older than the
 *       grace, keeping the lease alive between documents, and release. The pass stops early if the
 *       lease is lost or {@link #stop()} is called.
 * </ol>
 * Each process remembers when the next pass is due, as far as it learnt, and does not ask for the lease
 * before then. A process that dies mid-pass leaves the rest to the next interval: compaction is guarded per document
 * and harmless to repeat or to leave half done. The interval is measured by each asker's clock against
 * the start the last holder recorded by its own: clock skew between processes shifts a pass by the skew.
 */
public final class CompactionSchedule {
    private static final Logger log = LoggerFactory.getLogger(CompactionSchedule.class);
    static final String LAST_RUN = "lastRun";

    private final TombstoneCompactor compactor;
    private final LeaseProvider leases;
    private final String resource;
    private final String owner;
    private final Duration interval;
    private final Clock clock;
    private volatile boolean stopped;
    private volatile Instant notBefore = Instant.MIN;   // the next pass that this process knows of

    private CompactionSchedule(TombstoneCompactor compactor, LeaseProvider leases, String collection, String owner,
                               Duration interval, Clock clock) {
        this.compactor = compactor;
        this.leases = leases;
        this.resource = "compaction:" + collection;
        this.owner = owner;
        this.interval = interval;
        this.clock = clock;
    }

    /**
     * @param collection names the lease: one schedule per collection across the cluster
     * @param owner      this process, unique per incarnation
     * @param interval   the least time between the starts of two passes
     */
    public static CompactionSchedule create(TombstoneCompactor compactor, LeaseProvider leases, String collection,
                                            String owner, Duration interval, Clock clock) {
        if (compactor == null || leases == null || clock == null) {
            throw new InvalidConfigurationException("compaction schedule: compactor, leases and clock are required");
        }
        if (collection == null || collection.isBlank() || owner == null || owner.isBlank()) {
            throw new InvalidConfigurationException("compaction schedule: collection and owner must not be empty");
        }
        if (interval == null || interval.isNegative() || interval.isZero()) {
            throw new InvalidConfigurationException("compaction schedule: interval must be a positive duration, was "
                    + interval);
        }
        return new CompactionSchedule(compactor, leases, collection, owner, interval, clock);
    }

    public Duration interval() {
        return interval;
    }

    /** Ends a pass under way after the document it is on; later asks do nothing until {@link #resume()}. */
    public void stop() {
        stopped = true;
    }

    public void resume() {
        stopped = false;
    }

    /** Runs a pass if none began within the interval and no other process is running one; what it did. */
    public Optional<TombstoneCompactor.Compaction> runIfDue() {
        if (stopped || clock.instant().isBefore(notBefore)) {
            return Optional.empty();   // known not due: no lease round trip, no log line
        }
        Optional<Lease> held = leases.tryAcquire(resource, owner);
        if (held.isEmpty()) {
            return Optional.empty();
        }
        try (Lease lease = held.get()) {
            Instant now = clock.instant();
            Optional<Instant> last = lease.position().filter(p -> p.isDateTime(LAST_RUN))
                    .map(p -> Instant.ofEpochMilli(p.getDateTime(LAST_RUN).getValue()));
            if (last.isPresent() && now.isBefore(last.get().plus(interval))) {
                notBefore = last.get().plus(interval);
                return Optional.empty();
            }
            if (!lease.commit(new BsonDocument(LAST_RUN, new BsonDateTime(now.toEpochMilli())))) {
                log.warn("{}: the lease passed to another process before the pass began; it is that one's", resource);
                return Optional.empty();
            }
            notBefore = now.plus(interval);   // only once the pass is on record: a failed commit asks again next tick
            TombstoneCompactor.Compaction done = compactor.compactAll(() -> {
                lease.heartbeat();
                return lease.isHeld() && !stopped;
            });
            log.info("{}: compacted {} documents, {} tombstones dropped", resource, done.documents(),
                    done.tombstonesDropped());
            return Optional.of(done);
        }
    }
}
