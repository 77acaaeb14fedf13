package dev.orderless.boot;

import dev.orderless.history.History;
import java.util.Optional;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The version history: {@code UP} while it is kept, {@code DOWN} while how it starts is not decided (MongoDB did not
 * answer, or the decision needs {@code orderless.history.baseline.enabled}: {@code waitingFor} says which; the
 * consumer waits too) or while its retention or its baseline fails (the history keeps recording, but old records
 * pile up, or reads of entities the baseline has not reached cannot answer; the reason is shown); details: the
 * collection, retention's keep and passes where it runs, and the baseline ({@code complete}, {@code under way}, or
 * {@code not decided}).
 */
final class OrderlessHistoryHealth implements HealthIndicator {
    private final History history;
    private final Optional<OrderlessHistoryRetention> retention;
    private final OrderlessHistoryBaseline baseline;
    private final Optional<java.time.Duration> keep;

    OrderlessHistoryHealth(History history, Optional<OrderlessHistoryRetention> retention,
                           OrderlessHistoryBaseline baseline, Optional<java.time.Duration> keep) {
        this.history = history;
        this.retention = retention;
        this.baseline = baseline;
        this.keep = keep;
    }

    @Override
    public Health health() {
        Optional<String> retentionFailing = retention.flatMap(OrderlessHistoryRetention::lastFailure);
        Optional<String> baselineFailing = baseline.lastFailure();
        Optional<String> waitingFor = baseline.waitingFor();
        Health.Builder health = retentionFailing.isPresent() || baselineFailing.isPresent() || waitingFor.isPresent()
                ? Health.down() : Health.up();
        waitingFor.ifPresent(w -> health.withDetail("waitingFor", w));
        retentionFailing.ifPresent(f -> health.withDetail("retentionFailing", f));
        baselineFailing.ifPresent(f -> health.withDetail("baselineFailing", f));
        health.withDetail("collection", history.collection().getNamespace().getCollectionName())
                .withDetail("retention", keep.map(k -> "keep " + k).orElse("every version kept"))
                .withDetail("baseline", baseline.state());
        retention.ifPresent(r -> health.withDetail("retentionPasses", r.passes()));
        return health.build();
    }
}
