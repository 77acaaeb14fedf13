package dev.orderless.backends.rabbit;

import java.net.URI;

/**
 * An AMQP 0-9-1 broker to talk to: a real RabbitMQ named by a URI or in a container, or an embedded
 * Apache Qpid Broker-J. Obtain one with {@link RabbitBackends#rabbit()}; close it when done.
 */
public interface RabbitBackend extends AutoCloseable {

    enum Kind {
        /** {@code RABBITMQ_URI}: a real RabbitMQ. */
        EXTERNAL,
        /** {@code -Ptestcontainers}: RabbitMQ in a container. */
        CONTAINER,
        /** Default: Apache Qpid Broker-J in this JVM (AMQP 0-9-1, in memory). */
        EMBEDDED
    }

    Kind kind();

    /** {@code amqp://user:password@host:port/vhost}, as the RabbitMQ Java client takes it. */
    URI uri();

    /**
     * True where RabbitMQ's own features (quorum queues, {@code x-dead-letter-exchange}) are available;
     * false for the embedded broker, which speaks plain AMQP 0-9-1.
     */
    boolean isRabbitMq();

    String description();

    @Override
    void close();
}
