package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import java.util.Objects;
import java.util.Optional;

/**
 * What one demo command was asked to do, checked in one place: every range check is here, and its
 * message names the option to change. Built by the command-line classes ({@link Cli}); tests build it
 * directly with {@link #ofDefaults} and the {@code with} copies.
 *
 * @param command       run, consume, view, publish or verify
 * @param mongo         the MongoDB URI (from --mongo or MONGODB_URI); empty: embedded ({@code run} only)
 * @param rabbit        the AMQP URI (from --rabbit or RABBITMQ_URI); empty: embedded ({@code run} only)
 * @param database      --database
 * @param queue         --queue; the dead-letter queue is queue + ".dlq"
 * @param outbox        --outbox: record the actions in the outbox for a relay to publish
 * @param history       --history: consumers record every action in the students' history before applying it
 * @param protocol      --protocol: how consume and publish talk to RabbitMQ
 * @param broker        --broker: RabbitMQ, or a Kafka topic and share group ({@code run} and {@code chaos})
 * @param kafka         the Kafka bootstrap servers (from --kafka or KAFKA_BOOTSTRAP); empty: embedded
 */
record DemoOptions(String command, int students, int classes, int ops, int consumers, long seed, boolean shuffle,
                   double duplicateRate, int poison, Optional<String> mongo, Optional<String> rabbit, String database,
                   String queue, int exitWhenIdleSeconds, int waitSeconds, boolean outbox, boolean history,
                   Protocol protocol, Broker broker, Optional<String> kafka) {

    DemoOptions {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(mongo, "mongo");
        Objects.requireNonNull(rabbit, "rabbit");
        Objects.requireNonNull(protocol, "protocol");
        Objects.requireNonNull(broker, "broker");
        Objects.requireNonNull(kafka, "kafka");
        if (broker == Broker.KAFKA && outbox) {
            throw new InvalidConfigurationException("--outbox relays to RabbitMQ in the demo; --broker kafka publishes"
                    + " directly: leave one of them out");
        }
        if (broker != Broker.KAFKA && kafka.isPresent()) {
            throw new InvalidConfigurationException("--kafka names a Kafka broker: add --broker kafka,"
                    + " or leave it out for RabbitMQ");
        }
        range("--students", students, 1, 1_000_000);
        range("--classes", classes, 1, 10_000);
        range("--ops", ops, 0, 10_000_000);
        range("--consumers", consumers, 1, 64);
        range("--poison", poison, 0, 1_000_000);
        range("--exit-when-idle", exitWhenIdleSeconds, 0, 86_400);
        range("--wait", waitSeconds, 0, 86_400);
        if (!(duplicateRate >= 0 && duplicateRate <= 1)) {
            throw new InvalidConfigurationException("--duplicate-rate must be between 0 and 1, was " + duplicateRate);
        }
        if (outbox && (shuffle || duplicateRate > 0 || poison > 0)) {
            throw new InvalidConfigurationException("--outbox records each action once, for a relay to publish in its own"
                    + " order; --shuffle, --duplicate-rate and --poison shape a direct publish: leave them out");
        }
        if (database.isBlank() || queue.isBlank()) {
            throw new InvalidConfigurationException((database.isBlank() ? "--database" : "--queue") + " must not be blank");
        }
    }

    /** The defaults every command starts from (what {@code --help} shows). */
    static DemoOptions ofDefaults(String command) {
        return new DemoOptions(command, 200, 20, 5000, 4, 1, false, 0, 0, Optional.empty(), Optional.empty(),
                Enrollment.DATABASE, Enrollment.QUEUE, 0, 60, false, false, Protocol.AMQP_0_9_1, Broker.RABBITMQ,
                Optional.empty());
    }

    DemoOptions withBackends(Optional<String> mongo, Optional<String> rabbit) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withPlace(String database, String queue) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withWorkload(int students, int classes, int ops, long seed, boolean shuffle, double duplicateRate,
                             int poison) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withConsumers(int consumers, int exitWhenIdleSeconds) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withWait(int waitSeconds) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withOutbox(boolean outbox) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withHistory(boolean history) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withProtocol(Protocol protocol) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    DemoOptions withBroker(Broker broker, Optional<String> kafka) {
        return new DemoOptions(command, students, classes, ops, consumers, seed, shuffle, duplicateRate, poison, mongo,
                rabbit, database, queue, exitWhenIdleSeconds, waitSeconds, outbox, history, protocol, broker,
                kafka);
    }

    String deadLetterQueue() {
        return ConsumerOptions.defaultDeadLetterQueue(queue);
    }

    private static void range(String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw new InvalidConfigurationException(option + " must be between " + min + " and " + max + ", was " + value);
        }
    }
}
