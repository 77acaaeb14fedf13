package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The options of a command that needs only MongoDB ({@code view}, {@code outbox}): where it is and which
 * database the demo uses. The URI comes from the option, else from {@code MONGODB_URI}.
 */
final class MongoConnections {
    @Option(names = "--mongo", paramLabel = "URI", order = 100,
            description = "MongoDB connection string (default: $MONGODB_URI).")
    String mongo;

    @Option(names = "--database", paramLabel = "NAME", order = 102, defaultValue = Enrollment.DATABASE,
            description = "MongoDB database of the demo (default: ${DEFAULT-VALUE}).")
    String database;

    @Option(names = "--verbose", order = 104, description = "Print the stack trace of a failure.")
    boolean verbose;

    /** The URI from the option or the environment; without one, refuse, saying how to get one. */
    DemoOptions required(DemoOptions options, Map<String, String> env) {
        Optional<String> mongoUri = chosen(mongo, env, "MONGODB_URI");
        if (mongoUri.isEmpty()) {
            throw new InvalidConfigurationException("'" + options.command() + "' talks to a shared MongoDB, and none"
                    + " was named: pass --mongo, set MONGODB_URI, or " + Connections.SERVE_HINT);
        }
        return options.withBackends(mongoUri, Optional.empty()).withPlace(database, options.queue());
    }

    static Optional<String> chosen(String option, Map<String, String> env, String variable) {
        return Optional.ofNullable(option).or(() -> Optional.ofNullable(env.get(variable)))
                .map(String::trim).filter(uri -> !uri.isEmpty());
    }
}
