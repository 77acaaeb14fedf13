package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The options every connecting command shares: where MongoDB and the broker are, and which database and
 * queue the demo uses. A URI comes from the option, else from {@code MONGODB_URI} / {@code RABBITMQ_URI}.
 */
final class Connections {
    static final String SERVE_HINT = "start the demo's embedded MongoDB and AMQP broker with"
            + " 'eval \"$(java -jar demo-enrollment.jar serve --detach)\"'";

    @Option(names = "--mongo", paramLabel = "URI", order = 100,
            description = "MongoDB connection string (default: $MONGODB_URI).")
    String mongo;

    @Option(names = "--rabbit", paramLabel = "URI", order = 101,
            description = "RabbitMQ AMQP URI, e.g. amqp://guest:guest@localhost:5672/%%2F (default: $RABBITMQ_URI).")
    String rabbit;

    @Option(names = "--database", paramLabel = "NAME", order = 102, defaultValue = Enrollment.DATABASE,
            description = "MongoDB database of the demo (default: ${DEFAULT-VALUE}).")
    String database;

    @Option(names = "--queue", paramLabel = "NAME", order = 103, defaultValue = Enrollment.QUEUE,
            description = "Work queue; its dead letters go to NAME.dlq (default: ${DEFAULT-VALUE}).")
    String queue;

    @Option(names = "--verbose", order = 104, description = "Print the stack trace of a failure.")
    boolean verbose;

    /** The URIs from the options or the environment, or empty ones for {@code run}'s embedded default. */
    DemoOptions orEmbedded(DemoOptions options, Map<String, String> env) {
        return options.withBackends(chosen(mongo, env, "MONGODB_URI"), chosen(rabbit, env, "RABBITMQ_URI"))
                .withPlace(database, queue);
    }

    /** The URIs from the options or the environment; without one, refuse, saying how to get one. */
    DemoOptions required(DemoOptions options, Map<String, String> env) {
        return required(options, env, true);
    }

    /** As {@link #required(DemoOptions, Map)}; {@code publish --outbox} needs no broker and gets no AMQP URI. */
    DemoOptions required(DemoOptions options, Map<String, String> env, boolean needsRabbit) {
        Optional<String> mongoUri = chosen(mongo, env, "MONGODB_URI");
        Optional<String> rabbitUri = needsRabbit ? chosen(rabbit, env, "RABBITMQ_URI") : Optional.empty();
        if (mongoUri.isEmpty() || (needsRabbit && rabbitUri.isEmpty())) {
            String missing = mongoUri.isEmpty() && needsRabbit && rabbitUri.isEmpty() ? "no MongoDB and no RabbitMQ"
                    : mongoUri.isEmpty() ? "no MongoDB" : "no RabbitMQ";
            throw new InvalidConfigurationException("'" + options.command() + "' talks to shared backends, and " + missing
                    + " was named: pass " + (needsRabbit ? "--mongo and --rabbit" : "--mongo") + ", set MONGODB_URI"
                    + (needsRabbit ? " and RABBITMQ_URI" : "") + ", or " + SERVE_HINT);
        }
        return options.withBackends(mongoUri, rabbitUri).withPlace(database, queue);
    }

    private static Optional<String> chosen(String option, Map<String, String> env, String variable) {
        return MongoConnections.chosen(option, env, variable);
    }
}
