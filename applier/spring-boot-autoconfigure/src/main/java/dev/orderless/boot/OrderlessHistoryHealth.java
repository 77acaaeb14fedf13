package dev.orderless.boot;

import dev.orderless.history.History;
import java.util.Optional;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The version history: {@code UP} while it is kept, {@code DOWN} while its retention fails (the history keeps
 * recording, but old records pile up and the reason is shown); details: the collection, and retention's keep
 * and passes where it runs.
 */
final class OrderlessHistoryHealth implements HealthIndicator {
    private final History history;
    private final Optional<OrderlessHistoryRetention> retention;
    private final Optional<java.time.Duration> keep;

    OrderlessHistoryHealth(History history, Optional<OrderlessHistoryRetention> retention,
                           Optional<java.time.Duration> keep) {
        this.history = history;
        this.retention = retention;
        this.keep = keep;
    }

    @Override
    public Health health() {
        Optional<String> failing = retention.flatMap(OrderlessHistoryRetention::lastFailure);
        Health.Builder health = failing.isPresent() ? Health.down().withDetail("retentionFailing", failing.get())
                : Health.up();
        health.withDetail("collection", history.collection().getNamespace().getCollectionName())
                .withDetail("retention", keep.map(k -> "keep " + k).orElse("every version kept"));
        retention.ifPresent(r -> health.withDetail("retentionPasses", r.passes()));
        return health.build();
    }
}
