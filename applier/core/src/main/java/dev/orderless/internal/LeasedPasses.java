package dev.orderless.internal;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseProvider;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.BooleanSupplier;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pass over a collection at most once per interval across every process that asks, however many there
 * are and however their clocks tick: compaction, history retention and the history baseline. The lease
 * document remembers when the last pass began, and what a pass keeps of its progress ({@link Hold}):
 *
 * <pre>
 * { _id: "compaction:students", owner, expiresAt, fence, position: { lastRun: ISODate(...) } }
 * { _id: "history-baseline:students_history", ..., position: { lastRun: ..., progress: { after: "student-9" } } }
 * </pre>
 *
 * {@link #runIfDue}:
 * <ol>
 *   <li>Try the lease {@code resource}; held by another process: nothing to do (empty).
 *   <li>If the last pass began less than one interval ago: release, nothing to do (empty).
 *   <li>Record this pass's start in the lease (so even if the lease lapsed during the pass, nobody starts
 *       another before the interval is over), run the pass, keeping the lease alive each time the pass asks
 *       whether to go on, and release. The pass is told to stop if the lease is lost or {@link #stop()} was
 *       called.
 * </ol>
 * Each process remembers when the next pass is due, as far as it learnt, and does not ask for the lease
 * before then. A process that dies mid-pass leaves the rest to the next interval: a pass must be harmless to
 * repeat or to leave half done. The interval is measured by each asker's clock against the start the last
 * holder recorded by its own: clock skew between processes shifts a pass by the skew.
 */
public final class LeasedPasses {
    private static final Logger log = LoggerFactory.getLogger(LeasedPasses.class);
    public static final String LAST_RUN = "lastRun";
    /** Where a pass keeps its progress for the next ({@link Hold}), beside {@link #LAST_RUN}. */
    public static final String PROGRESS = "progress";

    private final LeaseProvider leases;
    private final String resource;
    private final String owner;
    private final Duration interval;
    private final Clock clock;
    private volatile boolean stopped;
    private volatile Instant notBefore = Instant.MIN;   // the next pass that this process knows of

    private LeasedPasses(LeaseProvider leases, String resource, String owner, Duration interval, Clock clock) {
        this.leases = leases;
        this.resource = resource;
        this.owner = owner;
        this.interval = interval;
        this.clock = clock;
    }

    /**
     * Validates the settings every leased pass shares, naming {@code schedule} (e.g. {@code "history retention"})
     * in the error: leases and clock present, owner not empty, interval positive.
     */
    public static LeasedPasses create(String schedule, LeaseProvider leases, String resource, String owner,
                                      Duration interval, Clock clock) {
        if (leases == null || clock == null) {
            throw new InvalidConfigurationException(schedule + ": leases and clock are required");
        }
        if (owner == null || owner.isBlank()) {
            throw InvalidConfigurationException.refused(schedule, "owner", "must not be empty");
        }
        if (interval == null || interval.isNegative() || interval.isZero()) {
            throw InvalidConfigurationException.refused(schedule, "interval", "must be a positive duration, was "
                    + interval);
        }
        return new LeasedPasses(leases, resource, owner, interval, clock);
    }

    public Duration interval() {
        return interval;
    }

    /** Ends a pass under way at its next question; later asks do nothing until {@link #resume()}. */
    public void stop() {
        stopped = true;
    }

    public void resume() {
        stopped = false;
    }

    /**
     * Runs {@code pass} if none began within the interval and no other process is running one; what it did.
     * The pass is given whether to go on, asked between units of its work.
     */
    public <T> Optional<T> runIfDue(Function<BooleanSupplier, T> pass) {
        return runHeldIfDue(pass::apply);
    }

    /**
     * A pass's hold on the lease: whether to go on ({@link #getAsBoolean()}, which also keeps the lease alive), and
     * the progress passes keep in the lease document, {@code position.progress}, for the next pass wherever it runs.
     */
    public interface Hold extends BooleanSupplier {
        /** What the last pass saved, on whichever process it ran; empty if none did. */
        Optional<BsonDocument> saved();

        /** Saves {@code progress} in the lease, only while it is still held; false (stop) if it is lost. */
        boolean save(BsonDocument progress);
    }

    /** {@link #runIfDue(Function)} for a pass that keeps its progress in the lease ({@link Hold}). */
    public <T> Optional<T> runHeldIfDue(Function<Hold, T> pass) {
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
            Optional<BsonDocument> progress = lease.position().filter(p -> p.isDocument(PROGRESS))
                    .map(p -> p.getDocument(PROGRESS));
            BsonDateTime started = new BsonDateTime(now.toEpochMilli());
            if (!lease.commit(withProgress(started, progress))) {
                log.warn("{}: the lease passed to another process before the pass began; it is that one's", resource);
                return Optional.empty();
            }
            notBefore = now.plus(interval);   // only once the pass is on record: a failed commit asks again next tick
            return Optional.of(pass.apply(new Hold() {
                private Optional<BsonDocument> saved = progress;

                @Override
                public boolean getAsBoolean() {
                    lease.heartbeat();
                    return lease.isHeld() && !stopped;
                }

                @Override
                public Optional<BsonDocument> saved() {
                    return saved.map(BsonDocument::clone);
                }

                @Override
                public boolean save(BsonDocument next) {
                    if (!lease.commit(withProgress(started, Optional.of(next)))) {
                        return false;
                    }
                    saved = Optional.of(next.clone());
                    return true;
                }
            }));
        }
    }

    private static BsonDocument withProgress(BsonDateTime started, Optional<BsonDocument> progress) {
        BsonDocument position = new BsonDocument(LAST_RUN, started);
        progress.ifPresent(p -> position.append(PROGRESS, p));
        return position;
    }
}
