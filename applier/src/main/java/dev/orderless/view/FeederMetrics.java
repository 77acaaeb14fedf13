package dev.orderless.view;

import dev.orderless.apply.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;

/**
 * {@code orderless.view.events{resource}}, {@code orderless.view.writes{resource,outcome}},
 * {@code orderless.view.commits}, {@code orderless.view.bootstraps{reason}},
 * {@code orderless.view.leadership{event=acquired|lost|released}}, {@code orderless.view.dead_lettered}
 * (poison events recorded and skipped), {@code orderless.view.attempts_failed} (one event's failed tries),
 * {@code orderless.view.source_deletes} (hard deletes of source documents carried to the view) and
 * {@code orderless.view.failures{reason}} (terms that ended in an error: {@code transient} hands over,
 * anything else is {@code FAILED}).
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
