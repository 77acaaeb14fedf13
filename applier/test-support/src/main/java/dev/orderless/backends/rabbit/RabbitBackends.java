package dev.orderless.backends.rabbit;

import dev.orderless.backends.Backends;
import java.net.URI;
import java.util.Optional;

/**
 * The one place that decides which AMQP broker the tests and the demo talk to, as {@link Backends} does
 * for MongoDB: {@code RABBITMQ_URI} (environment variable or system property) or a URI the caller passes
 * wins; else a RabbitMQ in a container with {@code orderless.backends=testcontainers}; else Apache Qpid
 * Broker-J in this JVM on a free loopback port.
 */
public final class RabbitBackends {
    /** The setting naming a RabbitMQ 4 beside the broker of {@code RABBITMQ_URI}, for the tests that run on both. */
    public static final String RABBITMQ4_URI = "RABBITMQ4_URI";

    private RabbitBackends() {
    }

    /** The RabbitMQ 4 that {@value #RABBITMQ4_URI} names (system property or environment variable), if any. */
    public static Optional<URI> rabbitMq4() {
        return Backends.setting(RABBITMQ4_URI, System.getenv()).map(URI::create);
    }

    /** The RabbitMQ 4 that {@value #RABBITMQ4_URI} names, if any; not closed by its user (not ours to stop). */
    public static Optional<RabbitBackend> rabbitMq4Backend() {
        return Backends.setting(RABBITMQ4_URI, System.getenv()).map(ExternalRabbit::new);
    }

    /** The AMQP broker this process should use; see the class comment for the order of choice. */
    public static RabbitBackend rabbit() {
        return rabbit(Optional.empty());
    }

    /** As {@link #rabbit()}, but an explicit {@code uri} (from a command line) wins over everything. */
    public static RabbitBackend rabbit(Optional<String> uri) {
        Optional<String> chosen = uri.or(() -> Backends.setting(Backends.RABBITMQ_URI, System.getenv()));
        if (chosen.isPresent()) {
            return new ExternalRabbit(chosen.get());
        }
        return startRabbit();
    }

    /** An AMQP broker of this process's own, whatever URI the environment names; see {@link Backends#startMongo()}. */
    public static RabbitBackend startRabbit() {
        return Backends.mode() == Backends.Mode.TESTCONTAINERS ? ContainerRabbit.start() : EmbeddedQpid.start();
    }
}
