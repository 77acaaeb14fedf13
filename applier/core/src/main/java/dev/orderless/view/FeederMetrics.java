package dev.orderless.view;

import dev.orderless.apply.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonTimestamp;

/**
 * {@code orderless.view.events{resource}}, {@code orderless.view.writes{resource,outcome}},
 * {@code orderless.view.commits}, {@code orderless.view.bootstraps{reason}},
 * {@code orderless.view.leadership{event=acquired|lost|released}}, {@code orderless.view.dead_lettered}
 * (poison events recorded and skipped), {@code orderless.view.attempts_failed} (one event's failed tries),
 * {@code orderless.view.source_deletes} (hard deletes of source documents carried to the view) and
 * {@code orderless.view.failures{reason}} (terms that ended in an error: {@code transient} hands over,
 * anything else is {@code FAILED}), and the gauge {@code orderless.view.lag} in seconds (see {@link #lag()}: the
 * largest among this feeder's active segments; NaN while it feeds none).
 */
final class FeederMetrics {
    private final Counter events;
    private final Counter skipped;
    private final Map<Outcome, Counter> writes = new EnumMap<>(Outcome.class);
    private final Counter commits;
    private final Counter bootstrapsNoToken;
    private final Counter bootstrapsHistoryLost;
    private final Counter acquired;
    private final Counter lost;
    private final Counter released;
    private final Counter deadLettered;
    private final Counter attemptsFailed;
    private final Counter sourceDeletes;
    private final MeterRegistry meters;
    private final String resource;
    private final List<Lag> lags = new CopyOnWriteArrayList<>();
    private static final long NONE = Long.MIN_VALUE;

    FeederMetrics(MeterRegistry meters, String resource) {
        events = Counter.builder("orderless.view.events").tag("resource", resource).register(meters);
        skipped = Counter.builder("orderless.view.skipped").tag("resource", resource).register(meters);
        for (Outcome outcome : Outcome.values()) {
            writes.put(outcome, Counter.builder("orderless.view.writes").tag("resource", resource)
                    .tag("outcome", outcome.tag()).register(meters));
        }
        commits = Counter.builder("orderless.view.commits").tag("resource", resource).register(meters);
        bootstrapsNoToken = Counter.builder("orderless.view.bootstraps").tag("resource", resource)
                .tag("reason", "no_token").register(meters);
        bootstrapsHistoryLost = Counter.builder("orderless.view.bootstraps").tag("resource", resource)
                .tag("reason", "history_lost").register(meters);
        acquired = leadership(meters, resource, "acquired");
        lost = leadership(meters, resource, "lost");
        released = leadership(meters, resource, "released");
        deadLettered = Counter.builder("orderless.view.dead_lettered").tag("resource", resource).register(meters);
        attemptsFailed = Counter.builder("orderless.view.attempts_failed").tag("resource", resource).register(meters);
        sourceDeletes = Counter.builder("orderless.view.source_deletes").tag("resource", resource).register(meters);
        this.meters = meters;
        this.resource = resource;
        // a registry keeps a gauge's first object: a feeder restarted on it must replace its predecessor's
        meters.find("orderless.view.lag").tag("resource", resource).gauges().forEach(meters::remove);
        Gauge.builder("orderless.view.lag", this, m -> m.lag().map(d -> d.toMillis() / 1000.0).orElse(Double.NaN))
                .tag("resource", resource).baseUnit("seconds").strongReference(true).register(meters);
    }

    /** A lag clock for one worker (one segment at a time); the gauge reports the largest. */
    Lag newLag() {
        Lag lag = new Lag();
        lags.add(lag);
        return lag;
    }

    /** The largest lag among this feeder's workers that are active; empty if none is. */
    Optional<Duration> lag() {
        return lags.stream().map(Lag::lag).flatMap(Optional::stream).max(Duration::compareTo);
    }

    /**
     * How far behind the source one worker's segment is: now minus the later of the cluster time of the last
     * event handled and the last time a poll found nothing more. Empty before the first of either in this
     * term. The cluster time is the server's clock and has second resolution: a skewed client clock shifts it.
     */
    static final class Lag {
        private final AtomicLong lastEventMillis = new AtomicLong(NONE);
        private final AtomicLong caughtUpMillis = new AtomicLong(NONE);

        /** An event written at {@code clusterTime} (second resolution) was handled. */
        void eventAt(BsonTimestamp clusterTime) {
            lastEventMillis.set(Integer.toUnsignedLong(clusterTime.getTime()) * 1000L);   // seconds, unsigned 32 bits
        }

        /** A poll found nothing more: every change up to now was handled. */
        void caughtUp() {
            caughtUpMillis.set(System.currentTimeMillis());
        }

        /** The term ended: the lag is now another feeder's to report. */
        void termEnded() {
            lastEventMillis.set(NONE);
            caughtUpMillis.set(NONE);
        }

        Optional<Duration> lag() {
            long since = Math.max(lastEventMillis.get(), caughtUpMillis.get());
            return since == NONE ? Optional.empty()
                    : Optional.of(Duration.ofMillis(Math.max(0, System.currentTimeMillis() - since)));
        }
    }

    void deadLettered() {
        deadLettered.increment();
    }

    void attemptFailed() {
        attemptsFailed.increment();
    }

    void sourceDeleted() {
        sourceDeletes.increment();
    }

    /** A term ended in an error; {@code reason} is a short tag: transient, failed, bug. */
    void failure(String reason) {
        Counter.builder("orderless.view.failures").tag("resource", resource).tag("reason", reason).register(meters)
                .increment();
    }

    private static Counter leadership(MeterRegistry meters, String resource, String event) {
        return Counter.builder("orderless.view.leadership").tag("resource", resource).tag("event", event).register(meters);
    }

    void event() {
        events.increment();
    }

    void skipped() {
        skipped.increment();
    }

    void write(Outcome outcome) {
        writes.get(outcome).increment();
    }

    void commit() {
        commits.increment();
    }

    void bootstrap(boolean historyLost) {
        (historyLost ? bootstrapsHistoryLost : bootstrapsNoToken).increment();
    }

    void acquired() {
        acquired.increment();
    }

    void lost() {
        lost.increment();
    }

    void released() {
        released.increment();
    }
}
