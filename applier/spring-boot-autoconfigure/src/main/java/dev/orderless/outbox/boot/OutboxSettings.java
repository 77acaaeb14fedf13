package dev.orderless.outbox.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.outbox.OutboxOptions;
import dev.orderless.outbox.RelayOptions;
import java.util.function.Supplier;

/** {@code orderless.outbox.*} over the defaults; a value out of range fails at start-up, naming the property. */
final class OutboxSettings {
    private OutboxSettings() {
    }

    static OutboxOptions outboxOptions(OrderlessProperties.Outbox outbox) {
        return renamed(() -> outbox.maxBacklog() == null ? OutboxOptions.ofDefaults()
                : OutboxOptions.ofDefaults().withMaxBacklog(outbox.maxBacklog()));
    }

    static RelayOptions relayOptions(OrderlessProperties.Outbox outbox) {
        OrderlessProperties.Outbox.Relay relay = outbox.relay();
        return renamed(() -> {
            RelayOptions options = RelayOptions.ofDefaults();
            options = relay.batch() == null ? options : options.withBatch(relay.batch());
            options = relay.claimTtl() == null ? options : options.withClaimTtl(relay.claimTtl());
            return relay.sweepInterval() == null ? options : options.withSweepInterval(relay.sweepInterval());
        });
    }

    private static <T> T renamed(Supplier<T> build) {
        try {
            return build.get();
        } catch (InvalidConfigurationException e) {
            throw new InvalidConfigurationException(e.getMessage()
                    .replaceFirst("^outbox options: ", "orderless.outbox.")
                    .replaceFirst("^relay options: ", "orderless.outbox.relay.")
                    .replace("maxBacklog", "max-backlog").replace("claimTtl", "claim-ttl")
                    .replace("sweepInterval", "sweep-interval"));
        }
    }
}
