package dev.orderless.boot.internal;

/**
 * Starts the Boot bean's consumer, once its queues are declared; called again after a failed start (the broker
 * did not answer) until one succeeds. What it keeps between attempts (the AMQP 1.0 client's environment) is
 * closed by {@link #close()}, when the bean stops.
 */
@FunctionalInterface
public interface ConsumerStarter extends AutoCloseable {
    /** Starts the consumer; an {@link org.springframework.amqp.AmqpConnectException} if the broker does not answer. */
    RunningConsumer start();

    /** Closes what it kept between attempts; nothing by default. */
    @Override
    default void close() {
    }
}
