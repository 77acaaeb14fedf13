package dev.orderless.view;

import com.mongodb.MongoException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.lease.Lease;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread of a {@link ViewFeeder}: takes the lease of a segment the {@link SegmentClaims} suggest, runs
 * {@link FeederTerm}s on it until it loses it, is asked to give it up, or stops; then looks for another.
 * Every way a term ends leaves a state someone can see: {@code STANDBY} and a WARN for a hand-over,
 * {@code FAILED} with the reason, an ERROR line and {@code orderless.view.failures{reason}} otherwise.
 */
final class SegmentWorker {
    private static final Logger log = LoggerFactory.getLogger(SegmentWorker.class);

    private final ViewFeeder.Parts parts;
    private final SegmentClaims claims;
    private final FeederMetrics.Lag lag;
    private final Thread thread;
    private volatile ViewFeeder.State state = ViewFeeder.State.STANDBY;
    private volatile OrderlessException failure;
    private volatile long fence = NO_FENCE;
    private volatile Optional<Segment> segment = Optional.empty();
    private static final long NO_FENCE = -1;
    private int barrenTerms;

    SegmentWorker(ViewFeeder.Parts parts, SegmentClaims claims, int number) {
        this.parts = parts;
        this.claims = claims;
        this.lag = parts.metrics().newLag();
        String name = "view-feeder-" + parts.options().resource() + (parts.options().workers() > 1 ? "-" + number : "");
        this.thread = new Thread(this::loop, name);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    Thread thread() {
        return thread;
    }

    ViewFeeder.State state() {
        return state;
    }

    Optional<OrderlessException> failure() {
        return Optional.ofNullable(failure);
    }

    OptionalLong fence() {
        long current = fence;
        return current == NO_FENCE ? OptionalLong.empty() : OptionalLong.of(current);
    }

    Optional<Segment> segment() {
        return segment;
    }

    Optional<java.time.Duration> lag() {
        return lag.lag();
    }

    private void loop() {
        try {
            while (parts.running()) {
                claims.alive();
                if (!takeOne()) {
                    state = state == ViewFeeder.State.FAILED ? state : ViewFeeder.State.STANDBY;
                    if (state == ViewFeeder.State.FAILED) {
                        return;
                    }
                    parts.pause(parts.options().standbyPoll());
                }
            }
            state = ViewFeeder.State.STOPPED;
        } catch (Throwable e) {   // never end the thread unseen
            fail(e, "bug");
        }
    }

    /** Tries the suggested segments in turn; true if it ran a term on one (false also when it must stop). */
    private boolean takeOne() {
        List<Segment> candidates = claims.candidates();
        for (Segment candidate : candidates) {
            Optional<Lease> acquired;
            try {
                acquired = parts.leases().tryAcquire(candidate.resource(parts.options().resource()),
                        parts.options().owner());
            } catch (OrderlessException e) {
                log.warn("feeder '{}': cannot reach the lease ({}); retrying", parts.options().resource(),
                        e.getMessage());
                return false;
            }
            if (acquired.isPresent() && !acquired.get().isHeld()) {
                // the claim's reply came after the lease it won had expired by this node's clock: another feeder
                // may own it already, and going active would show two owners (the fence guards the data, not this)
                log.warn("feeder '{}': won the lease (fence {}) only after it had expired; not taking it",
                        candidate.resource(parts.options().resource()), acquired.get().fence());
                acquired.get().abandon();
                continue;
            }
            if (acquired.isPresent()) {
                claims.taken(candidate);
                segment = Optional.of(candidate);
                try {
                    return term(candidate, acquired.get());
                } finally {
                    segment = Optional.empty();
                    claims.given(candidate);
                }
            }
        }
        return false;
    }

    /** One term as owner of {@code seg}; false if this worker must not continue at all. */
    private boolean term(Segment seg, Lease lease) {
        FeederOptions options = parts.options().forSegment(seg);
        state = ViewFeeder.State.ACTIVE;
        fence = lease.fence();
        parts.metrics().acquired();
        log.info("feeder '{}' active as {} (fence {})", options.resource(), options.owner(), lease.fence());
        boolean release = true;
        boolean handBack = false;
        Projector projector = new Projector(parts.view(), parts.projection(), options, parts.metrics(), lease,
                Optional.of(parts.deadLetters()), lease::heartbeat);
        FeederTerm term = new FeederTerm(parts.database(), parts.source(), projector, options, parts.metrics(), lag, seg,
                parts.client(), lease);
        try {
            term.run(() -> parts.running() && claims.alive() && !claims.shouldRelease(seg), () -> !parts.halted());
            return true;
        } catch (LeaseLostException e) {
            state = ViewFeeder.State.STANDBY;   // before it is counted: whoever sees the loss sees a standby
            parts.metrics().lost();
            release = false;
            log.warn("feeder '{}' lost its lease (fence {}) on {}; back to standby", options.resource(), lease.fence(),
                    e.getMessage());
            return true;
        } catch (FeederStoppedException | InvalidConfigurationException e) {
            fail(e, "failed");
            return false;
        } catch (OrderlessException | MongoException e) {
            barrenTerms = term.committedAny() ? 1 : barrenTerms + 1;
            parts.metrics().failure("transient");
            if (barrenTerms >= ViewFeeder.MAX_BARREN_TERMS) {
                fail(new FeederStoppedException("feeder '" + options.resource() + "': " + barrenTerms + " terms in a"
                        + " row failed without committing progress, the last with: " + e.getMessage()
                        + ". Check MongoDB and the source collection, then restart the feeder"), "failed");
                return false;
            }
            state = ViewFeeder.State.STANDBY;
            handBack = true;
            log.warn("feeder '{}': {}; handing the lease back and retrying", options.resource(), e.getMessage());
            return true;
        } catch (RuntimeException | Error e) {
            fail(e, "bug");
            return false;
        } finally {
            fence = NO_FENCE;
            lag.termEnded();
            if (term.committedAny() && !handBack) {
                barrenTerms = 0;
            }
            if (parts.halted() || !release) {
                lease.abandon();
            } else {
                lease.close();
                parts.metrics().released();
            }
            if (state == ViewFeeder.State.ACTIVE) {
                state = ViewFeeder.State.STANDBY;   // gave the segment up: looking for another
            }
            if (handBack) {
                parts.pause(parts.options().standbyPoll());   // after the release, so a standby gets its turn
            }
        }
    }

    /** The end of this worker: FAILED, the reason kept, an ERROR line, a metric. */
    private void fail(Throwable e, String reason) {
        String resource = segment.map(s -> s.resource(parts.options().resource())).orElse(parts.options().resource());
        failure = e instanceof OrderlessException o ? o
                : new FeederStoppedException("feeder '" + resource + "' stopped on an unexpected "
                        + e.getClass().getSimpleName() + ": " + e.getMessage());
        state = ViewFeeder.State.FAILED;
        parts.metrics().failure(reason);
        if (e instanceof OrderlessException) {
            log.error("feeder '{}' stopped: {}", resource, e.getMessage());
        } else {
            log.error("feeder '{}' stopped on an unexpected error", resource, e);
        }
    }
}
