package dev.orderless.demo;

import dev.orderless.apply.Outcome;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;

/** Reads the consumers' and the feeder's counters out of the meter registry. */
final class Counts {
    private final MeterRegistry meters;

    Counts(MeterRegistry meters) {
        this.meters = meters;
    }

    double outcome(Outcome outcome) {
        return sum(Search.in(meters).name("orderless.consume.outcomes").tag("outcome", outcome.tag()));
    }

    double applied() {
        return outcome(Outcome.APPLIED);
    }

    double stale() {
        return outcome(Outcome.SUPERSEDED) + outcome(Outcome.DUPLICATE) + outcome(Outcome.SEQ_COLLISION);
    }

    double deadLettered() {
        return sum(Search.in(meters).name("orderless.consume.dead_lettered"));
    }

    double retried() {
        return sum(Search.in(meters).name("orderless.consume.retried"));
    }

    double handled() {
        return applied() + stale() + deadLettered();
    }

    double viewEvents() {
        return sum(Search.in(meters).name("orderless.view.events"));
    }

    private static double sum(Search search) {
        return search.counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
