package dev.orderless.consume.internal;

import dev.orderless.CannotApplyException;
import dev.orderless.apply.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every outcome of every delivery, counted:
 * <ul>
 *   <li>{@code orderless.consume.outcomes{queue,outcome}}: applied, superseded, duplicate, seq_collision
 *       (acked);
 *   <li>{@code orderless.consume.dead_lettered{queue,reason}}: bad_input, oversized, beyond_horizon,
 *       no_progress, too_large, held_too_long (the full reason travels in the message header; tags stay
 *       few);
 *   <li>{@code orderless.consume.retried{queue}}: applies repeated after a transient MongoDB failure;
 *   <li>{@code orderless.consume.requeued{queue}}: messages handed back unacked (shutdown, or a
 *       dead-letter publish that failed);
 *   <li>{@code orderless.consume.retrying{queue}} (a gauge): messages being retried now, after a transient
 *       failure (at most one per consumer thread; the deliveries prefetched behind them are not counted).
 * </ul>
 * Registered elsewhere: {@code orderless.consume.dead_letters.held{queue}} ({@code DeadLetterPublisher})
 * and {@code orderless.amqp.blocked.*} ({@code BrokerBlocking}).
 */
public final class ConsumerMetrics {
    /** Why a message was dead-lettered: its {@code reason} tag, and the kind a letter carries. */
    public enum DeadLetterReason {
        BAD_INPUT, UNKNOWN_FIELD, UNSUPPORTED_ENVELOPE, OVERSIZED, BEYOND_HORIZON, NO_PROGRESS, TOO_LARGE, HELD_TOO_LONG,
        /** Kafka: a record on its last delivery that MongoDB could not take (the broker would drop it next). */
        DELIVERY_LIMIT;

        /** As tag and letter kind: {@code bad_input}, {@code held_too_long}, ... */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        static DeadLetterReason of(CannotApplyException.Kind kind) {
            return switch (kind) {
                case BAD_INPUT -> BAD_INPUT;
                case UNKNOWN_FIELD -> UNKNOWN_FIELD;
                case UNSUPPORTED_ENVELOPE -> UNSUPPORTED_ENVELOPE;
                case NO_PROGRESS -> NO_PROGRESS;
                case TOO_LARGE -> TOO_LARGE;
            };
        }
    }

    private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
    private final Map<DeadLetterReason, Counter> deadLettered = new EnumMap<>(DeadLetterReason.class);
    private final Counter retried;
    private final Counter requeued;
    private final AtomicInteger retrying = new AtomicInteger();

    public ConsumerMetrics(MeterRegistry meters, String queue) {
        for (Outcome outcome : Outcome.values()) {
            outcomes.put(outcome, Counter.builder("orderless.consume.outcomes").tag("queue", queue)
                    .tag("outcome", outcome.tag()).register(meters));
        }
        for (DeadLetterReason reason : DeadLetterReason.values()) {
            deadLettered.put(reason, Counter.builder("orderless.consume.dead_lettered").tag("queue", queue)
                    .tag("reason", reason.tag()).register(meters));
        }
        retried = Counter.builder("orderless.consume.retried").tag("queue", queue).register(meters);
        requeued = Counter.builder("orderless.consume.requeued").tag("queue", queue).register(meters);
        withoutGauge(meters, "orderless.consume.retrying", "queue", queue);
        Gauge.builder("orderless.consume.retrying", retrying, AtomicInteger::get).tag("queue", queue).register(meters);
    }

    /**
     * Removes the gauge a previous instance registered under these tags: a registry keeps the first object a
     * gauge was registered with, so a consumer restarted on the same registry would report its dead
     * predecessor for ever. The latest instance reports.
     */
    public static void withoutGauge(MeterRegistry meters, String name, String tag, String value) {
        meters.find(name).tag(tag, value).gauges().forEach(meters::remove);
    }

    void retryingStarted() {
        retrying.incrementAndGet();
    }

    void retryingEnded() {
        retrying.decrementAndGet();
    }

    /** Messages being retried now: each failed once, and is retried until applied, dead-lettered or handed back. */
    public int retrying() {
        return retrying.get();
    }

    void outcome(Outcome outcome) {
        outcomes.get(outcome).increment();
    }

    void deadLettered(DeadLetterReason reason) {
        deadLettered.get(reason).increment();
    }

    void retried() {
        retried.increment();
    }

    void requeued() {
        requeued.increment();
    }
}
