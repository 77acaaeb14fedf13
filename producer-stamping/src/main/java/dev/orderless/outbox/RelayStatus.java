package dev.orderless.outbox;

import dev.orderless.Backoff;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What a relay reports about itself, and how long it pauses while failures last. Pure: the relay logs
 * and counts what the answers say.
 *
 * <ol>
 *   <li>{@link #trouble} records a failure: the state becomes {@link OutboxRelay.State#BACKING_OFF} with the
 *       reason, and the pause before the next try is {@code backoff.pause(n)} after the {@code n}th failure
 *       in a row. Only the first of a run of failures says it started one (one WARN line per outage).
 *   <li>{@link #recovered} records a success: {@link OutboxRelay.State#RUNNING}, no problem, the next
 *       failure pauses like the first; it answers how long the run of failures it ends lasted.
 *   <li>{@link #failed} is final: {@link OutboxRelay.State#FAILED} with the reason; {@link #stopped} keeps
 *       a failure visible.
 * </ol>
 * Written by the relay's own thread, read by any (state and problem are published together).
 */
final class RelayStatus {
    private final Backoff backoff;
    private volatile Report report = new Report(OutboxRelay.State.RUNNING, Optional.empty());
    private Instant troubleSince = Instant.MIN;
    private int failures;
    private Duration pause = Duration.ZERO;
    private Optional<Duration> next = Optional.empty();

    private record Report(OutboxRelay.State state, Optional<String> problem) {
    }

    RelayStatus(Backoff backoff) {
        this.backoff = backoff;
    }

    OutboxRelay.State state() {
        return report.state();
    }

    Optional<String> problem() {
        return report.problem();
    }

    /**
     * A failure at {@code now}; true if it starts a run of failures. The pause to take is {@link #pause()}:
     * the one {@link #nextPause()} announced, if it was asked.
     */
    boolean trouble(String reason, Instant now) {
        boolean starts = report.state() != OutboxRelay.State.BACKING_OFF;
        if (starts) {
            troubleSince = now;
        }
        pause = nextPause();
        next = Optional.empty();
        if (failures < Integer.MAX_VALUE) {   // a month-long outage must not wrap the count
            failures++;
        }
        report = new Report(OutboxRelay.State.BACKING_OFF, Optional.of(reason));
        return starts;
    }

    /** The pause the next failure will take, before it is recorded (entries released now are due after it). */
    Duration nextPause() {
        if (next.isEmpty()) {
            next = Optional.of(backoff.pause(failures + 1));
        }
        return next.get();
    }

    /** The pause after the failure last recorded; zero before any. */
    Duration pause() {
        return pause;
    }

    /** A success at {@code now}; how long the run of failures it ends lasted, if it ended one. */
    Optional<Duration> recovered(Instant now) {
        Optional<Duration> ended = report.state() == OutboxRelay.State.BACKING_OFF
                ? Optional.of(Duration.between(troubleSince, now)) : Optional.empty();
        failures = 0;
        pause = Duration.ZERO;
        next = Optional.empty();
        report = new Report(OutboxRelay.State.RUNNING, Optional.empty());
        return ended;
    }

    /** The relay ended on something it cannot go on from. */
    void failed(String reason) {
        report = new Report(OutboxRelay.State.FAILED, Optional.of(reason));
    }

    /** The relay stopped; a failure stays what it reports. */
    void stopped() {
        if (report.state() != OutboxRelay.State.FAILED) {
            report = new Report(OutboxRelay.State.STOPPED, report.problem());
        }
    }
}
