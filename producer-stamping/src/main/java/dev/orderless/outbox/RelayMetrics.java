package dev.orderless.outbox;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What a relay counts and measures, tagged with the outbox's name:
 * {@code orderless.outbox.published}, {@code orderless.outbox.relay.failures},
 * {@code orderless.outbox.refused} (sends of an entry's own message that failed),
 * {@code orderless.outbox.parked} (entries set aside) as counters; {@code orderless.outbox.backlog}
 * (entries waiting, parked ones not counted), {@code orderless.outbox.oldest} (seconds the oldest waiting
 * entry has waited) and {@code orderless.outbox.parked.now} (entries parked now) as gauges, read from
 * MongoDB at most once a second by the relay's own loop, never by a metrics scrape.
 */
final class RelayMetrics {
    private static final long REFRESH_NANOS = Duration.ofSeconds(1).toNanos();

    private final OutboxStore store;
    private final RelayOptions options;
    private final MeterRegistry meters;
    private final Counter published;
    private final Counter failures;
    private final Counter parked;
    private final Counter refused;
    private final List<Meter> gauges;
    private final java.util.concurrent.atomic.AtomicLong publishedHere = new java.util.concurrent.atomic.AtomicLong();
    private volatile long backlog;
    private volatile long parkedNow;
    private volatile Optional<Instant> oldest = Optional.empty();
    private long refreshedAt;
    private boolean everRefreshed;

    RelayMetrics(OutboxStore store, RelayOptions options) {
        this.store = store;
        this.options = options;
        this.meters = options.meters();
        String name = store.name();
        this.published = Counter.builder("orderless.outbox.published").tag("outbox", name)
                .description("outbox entries published, confirmed and removed").register(meters);
        this.failures = Counter.builder("orderless.outbox.relay.failures").tag("outbox", name)
                .description("relay rounds that failed (broker or MongoDB) and backed off").register(meters);
        this.parked = Counter.builder("orderless.outbox.parked").tag("outbox", name)
                .description("outbox entries set aside as never publishable").register(meters);
        this.refused = Counter.builder("orderless.outbox.refused").tag("outbox", name)
                .description("sends of an outbox entry that failed because of its own message").register(meters);
        this.gauges = List.of(
                Gauge.builder("orderless.outbox.backlog", this, m -> m.backlog).tag("outbox", name)
                        .description("outbox entries waiting to be published").register(meters),
                Gauge.builder("orderless.outbox.oldest", this, m -> m.oldest().map(Duration::toMillis).orElse(0L) / 1000.0)
                        .tag("outbox", name).baseUnit("seconds")
                        .description("how long the oldest waiting outbox entry has waited").register(meters),
                Gauge.builder("orderless.outbox.parked.now", this, m -> m.parkedNow).tag("outbox", name)
                        .description("outbox entries parked now, waiting for an operator").register(meters));
    }

    /** Reads the backlog and its oldest entry, if a second has passed since the last read. */
    void refresh() {
        long now = System.nanoTime();
        if (everRefreshed && now - refreshedAt < REFRESH_NANOS) {
            return;
        }
        refreshedAt = now;
        everRefreshed = true;
        long parkedRead = store.parked();
        long backlogRead = store.backlog(parkedRead);
        oldest = backlogRead == 0 ? Optional.empty() : store.oldest();
        backlog = backlogRead;
        parkedNow = parkedRead;   // last: whoever sees this figure sees the backlog read with it
    }

    long backlog() {
        return backlog;
    }

    long parkedNow() {
        return parkedNow;
    }

    Optional<Duration> oldest() {
        return oldest.map(at -> {
            Duration waited = Duration.between(at, options.clock().instant());
            return waited.isNegative() ? Duration.ZERO : waited;
        });
    }

    /** Published by this relay (the counter sums every relay on the registry). */
    long published() {
        return publishedHere.get();
    }

    void published(int count) {
        publishedHere.addAndGet(count);
        published.increment(count);
    }

    void failed() {
        failures.increment();
    }

    void parked() {
        parked.increment();
    }

    void refused() {
        refused.increment();
    }

    /** Unregisters the gauges, so a relay started again on the same registry reports its own. */
    void close() {
        gauges.forEach(meters::remove);
    }
}
