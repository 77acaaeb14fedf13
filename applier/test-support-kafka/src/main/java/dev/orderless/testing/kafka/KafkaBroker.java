package dev.orderless.testing.kafka;

/**
 * A Kafka broker a test talks to: where to connect, and how to let it go.
 *
 * <p>Implementations: {@link EmbeddedKafka} (a KRaft node in this JVM), {@link KafkaProcess} (the same node as a
 * child process that can be killed) and a broker named by {@value KafkaBrokers#KAFKA_BOOTSTRAP}, which this code does
 * not own and so never stops ({@link KafkaBrokers#fromEnvironment()}).
 */
public interface KafkaBroker extends AutoCloseable {

    /** The {@code bootstrap.servers} value of this broker, such as {@code 127.0.0.1:40123}. */
    String bootstrapServers();

    /**
     * Stops the broker if this code started it, and deletes its log directories; does nothing for a broker it does
     * not own. Idempotent. Never throws a checked exception.
     */
    @Override
    void close();
}
