package dev.orderless.demo;

import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code --broker} and {@code --kafka}, for the commands that start their own backends ({@code run}, {@code chaos}):
 * RabbitMQ by default; with {@code kafka}, the broker {@code --kafka} or {@code KAFKA_BOOTSTRAP} names, else an
 * embedded one. {@code KAFKA_BOOTSTRAP} is read only with {@code --broker kafka}, so a shell that has it set still
 * runs on RabbitMQ by default.
 */
final class BrokerChoice {
    static final String KAFKA_BOOTSTRAP = "KAFKA_BOOTSTRAP";

    @Option(names = "--broker", paramLabel = "BROKER", order = 90, defaultValue = "rabbitmq",
            converter = Broker.Converter.class, completionCandidates = Broker.Values.class,
            description = "rabbitmq, or kafka: a topic consumed by one share group, the same RESULT (default: ${DEFAULT-VALUE}).")
    Broker broker;

    @Option(names = "--kafka", paramLabel = "BOOTSTRAP", order = 91,
            description = "With --broker kafka: the bootstrap servers of a Kafka broker with share groups on, e.g."
                    + " localhost:9092 (default: $KAFKA_BOOTSTRAP, else an embedded broker).")
    String kafka;

    /**
     * {@code options} on the chosen broker. On Kafka no RabbitMQ is used: one named with {@code --rabbit} is refused,
     * {@code RABBITMQ_URI} is left aside.
     */
    DemoOptions applyTo(DemoOptions options, Connections connections, Map<String, String> env) {
        if (broker != Broker.KAFKA) {
            return options.withBroker(broker, Optional.ofNullable(kafka).map(String::trim));
        }
        if (connections.rabbit != null) {
            throw new dev.orderless.InvalidConfigurationException("--rabbit names a RabbitMQ, and --broker kafka uses"
                    + " none: leave one of them out");
        }
        return options.withBackends(options.mongo(), Optional.empty())
                .withBroker(broker, MongoConnections.chosen(kafka, env, KAFKA_BOOTSTRAP));
    }
}
