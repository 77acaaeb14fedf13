package dev.orderless.view;

import dev.orderless.apply.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;

/**
 * {@code orderless.view.events{resource}}, {@code orderless.view.writes{resource,outcome}},
 * {@code orderless.view.commits}, {@code orderless.view.bootstraps{reason}} and
 * {@code orderless.view.leadership{event=acquired|lost|released}}.
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
