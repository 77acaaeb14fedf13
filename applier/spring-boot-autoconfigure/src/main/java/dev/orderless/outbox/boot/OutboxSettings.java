package dev.orderless.outbox.boot;

import dev.orderless.boot.OrderlessProperties;
import dev.orderless.boot.internal.OptionProperties;
import dev.orderless.outbox.OutboxOptions;
import dev.orderless.outbox.RelayOptions;

/** {@code orderless.outbox.*} over the defaults; a value out of range fails at start-up, naming the property. */
final class OutboxSettings {
    private OutboxSettings() {
    }

    static OutboxOptions outboxOptions(OrderlessProperties.Outbox outbox) {
        return OptionProperties.under("orderless.outbox", () -> outbox.maxBacklog() == null ? OutboxOptions.ofDefaults()
                : OutboxOptions.ofDefaults().withMaxBacklog(outbox.maxBacklog()));
    }

    static RelayOptions relayOptions(OrderlessProperties.Outbox outbox) {
        OrderlessProperties.Outbox.Relay relay = outbox.relay();
        return OptionProperties.under("orderless.outbox.relay", () -> {
            RelayOptions options = RelayOptions.ofDefaults();
            options = relay.batch() == null ? options : options.withBatch(relay.batch());
            options = relay.claimTtl() == null ? options : options.withClaimTtl(relay.claimTtl());
            options = options.withBackoff(relay.backoff().over(options.backoff()));
            return relay.sweepInterval() == null ? options : options.withSweepInterval(relay.sweepInterval());
        });
    }
}
