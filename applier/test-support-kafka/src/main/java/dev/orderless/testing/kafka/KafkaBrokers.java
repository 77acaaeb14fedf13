package dev.orderless.testing.kafka;

import java.util.Map;
import java.util.Optional;

/**
 * Chooses the broker tests run on: the one {@value #KAFKA_BOOTSTRAP} names (a system property or an environment
 * variable), which this code does not own, else a new {@link EmbeddedKafka}.
 */
public final class KafkaBrokers {
    /** The setting naming an existing broker's {@code bootstrap.servers}; it must have share groups enabled. */
    public static final String KAFKA_BOOTSTRAP = "KAFKA_BOOTSTRAP";

    private KafkaBrokers() {
    }

    /**
     * {@value #KAFKA_BOOTSTRAP}'s broker if the setting is there (its {@code close()} does nothing), else
     * {@link EmbeddedKafka#start()}.
     */
    public static KafkaBroker fromEnvironment() {
        return bootstrap(System.getenv()).map(KafkaBrokers::external).orElseGet(EmbeddedKafka::start);
    }

    /** The bootstrap servers {@value #KAFKA_BOOTSTRAP} names, as a system property first, else in {@code env}. */
    public static Optional<String> bootstrap(Map<String, String> env) {
        String value = System.getProperty(KAFKA_BOOTSTRAP);
        if (value == null || value.isBlank()) {
            value = env.get(KAFKA_BOOTSTRAP);
        }
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.strip());
    }

    /** A broker that runs elsewhere, at {@code bootstrapServers}: closing it does nothing. */
    public static KafkaBroker external(String bootstrapServers) {
        if (bootstrapServers == null || bootstrapServers.isBlank()) {
            throw new IllegalArgumentException("bootstrapServers must name at least one host:port");
        }
        return new External(bootstrapServers.strip());
    }

    private record External(String bootstrapServers) implements KafkaBroker {
        @Override
        public void close() {
            // not ours to stop
        }
    }
}
