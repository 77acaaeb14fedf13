package dev.orderless.backends;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The one place that decides which MongoDB the tests and the demo talk to ({@code RabbitBackends} in
 * orderless-test-support decides the AMQP broker the same way).
 *
 * <ol>
 *   <li>An explicit URI wins: {@code MONGODB_URI} / {@code RABBITMQ_URI} (environment variable, or the
 *       system property of the same name), or one passed in by the caller (the demo's {@code --mongo}).
 *   <li>Else, with {@code orderless.backends=testcontainers} (what {@code -Ptestcontainers} sets): a
 *       MongoDB replica set and a RabbitMQ in containers, which needs a Docker engine.
 *   <li>Else (the default, {@code embedded}): mongo-java-server with its oplog enabled, and Apache Qpid
 *       Broker-J, both in this JVM on free loopback ports.
 * </ol>
 */
public final class Backends {
    public static final String MONGODB_URI = "MONGODB_URI";
    public static final String RABBITMQ_URI = "RABBITMQ_URI";
    /** System property or ({@code ORDERLESS_BACKENDS}) environment variable: embedded or testcontainers. */
    public static final String MODE = "orderless.backends";

    private Backends() {
    }

    /** The MongoDB this process should use; see the class comment for the order of choice. */
    public static MongoBackend mongo() {
        return mongo(Optional.empty());
    }

    /** As {@link #mongo()}, but an explicit {@code uri} (from a command line) wins over everything. */
    public static MongoBackend mongo(Optional<String> uri) {
        Optional<String> chosen = uri.or(() -> setting(MONGODB_URI, System.getenv()));
        if (chosen.isPresent()) {
            return new ExternalMongo(chosen.get());
        }
        return startMongo();
    }

    /**
     * A MongoDB of this process's own, whatever URI the environment names: embedded, or in a container
     * with {@code orderless.backends=testcontainers}. For a caller that has already decided there is no URI
     * (the demo's {@code run}, whose environment is passed in).
     */
    public static MongoBackend startMongo() {
        return mode() == Mode.TESTCONTAINERS ? ContainerMongo.start() : EmbeddedMongo.start();
    }

    /** Where backends of this process's own run. */
    public enum Mode { EMBEDDED, TESTCONTAINERS }

    /** {@value #MODE} as set (system property, else {@code ORDERLESS_BACKENDS}); embedded by default. */
    public static Mode mode() {
        return mode(Optional.ofNullable(System.getProperty(MODE))
                .or(() -> Optional.ofNullable(System.getenv("ORDERLESS_BACKENDS"))));
    }

    public static Mode mode(Optional<String> setting) {
        String value = setting.map(String::trim).filter(v -> !v.isEmpty()).orElse("embedded");
        try {
            return Mode.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(MODE + " must be 'embedded' or 'testcontainers', was '" + value + "'");
        }
    }

    /** A setting from the system property of that name, else the environment variable. */
    public static Optional<String> setting(String name, Map<String, String> env) {
        return Optional.ofNullable(System.getProperty(name))
                .or(() -> Optional.ofNullable(env.get(name)))
                .map(String::trim)
                .filter(v -> !v.isEmpty());
    }
}
