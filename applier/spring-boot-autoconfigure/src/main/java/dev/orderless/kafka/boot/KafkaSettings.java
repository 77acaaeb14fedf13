package dev.orderless.kafka.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.boot.internal.OptionProperties;
import dev.orderless.kafka.ShareConsumerOptions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.kafka.autoconfigure.KafkaConnectionDetails;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.boot.kafka.autoconfigure.SslBundleSslEngineFactory;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.util.StringUtils;

/**
 * {@code orderless.kafka.*} as the consumer's options, and {@code spring.kafka.*} as its Kafka client properties: the
 * connection is configured once, as Spring Boot's; a value out of range fails at start-up, naming the property.
 */
final class KafkaSettings {
    private static final Logger log = LoggerFactory.getLogger(KafkaSettings.class);
    private static final String PREFIX = "orderless.kafka";
    /**
     * What a share consumer refuses to start with (Kafka's {@code ShareConsumerConfig}), though an application's
     * {@code spring.kafka.consumer.*} commonly sets some of them for its consumer groups (auto-offset-reset,
     * enable-auto-commit, isolation-level): left out, so that those settings do not stop the share consumer.
     */
    static final List<String> NOT_FOR_SHARE_GROUPS = List.of("auto.offset.reset", "enable.auto.commit",
            "group.instance.id", "isolation.level", "partition.assignment.strategy", "interceptor.classes",
            "session.timeout.ms", "heartbeat.interval.ms", "group.protocol", "group.remote.assignor");

    private KafkaSettings() {
    }

    /**
     * The consumer's options: {@code ShareConsumerOptions.ofDefaults(topic, group)} with what is set over it. The
     * topic and group are required; a value the options refuse fails naming its {@code orderless.kafka.*} property.
     */
    static ShareConsumerOptions options(OrderlessProperties.Kafka kafka) {
        if (kafka.topic() == null || kafka.topic().isBlank()) {
            throw new InvalidConfigurationException("orderless.kafka.topic is not set: name the topic the operations"
                    + " are produced to, or set orderless.kafka.enabled=false");
        }
        if (kafka.group() == null || kafka.group().isBlank()) {
            throw new InvalidConfigurationException("orderless.kafka.group is not set: name the share group every"
                    + " instance of this application joins to consume '" + kafka.topic() + "', e.g."
                    + " orderless.kafka.group=" + kafka.topic().replace('.', '-') + " (not a consumer group's id:"
                    + " Kafka refuses a group id used by both kinds)");
        }
        return OptionProperties.under(PREFIX, () -> {
            ShareConsumerOptions options = ShareConsumerOptions.ofDefaults(kafka.topic(), kafka.group());
            options = kafka.deadLetterTopic() == null ? options : options.withDeadLetterTopic(kafka.deadLetterTopic());
            options = kafka.concurrency() == null ? options : options.withConcurrency(kafka.concurrency());
            options = kafka.maxPollRecords() == null ? options : options.withMaxPollRecords(kafka.maxPollRecords());
            options = kafka.pollTimeout() == null ? options : options.withPollTimeout(kafka.pollTimeout());
            options = kafka.maxHold() == null ? options : options.withMaxHold(kafka.maxHold());
            options = options.withBackoff(kafka.backoff().over(options.backoff()));
            return kafka.shutdownTimeout() == null ? options : options.withShutdownTimeout(kafka.shutdownTimeout());
        });
    }

    /**
     * Spring Boot's consumer properties ({@code spring.kafka.*}, {@code spring.kafka.consumer.*}, their
     * {@code properties.*}), with the connection as Boot's {@link KafkaConnectionDetails} give it (a service
     * connection's, or the properties'), less what a share consumer refuses (said once at INFO). The consumer sets
     * its group, deserializers, acknowledgement and records per poll itself.
     */
    static Map<String, Object> clientProperties(KafkaProperties boot, Optional<KafkaConnectionDetails> details) {
        Map<String, Object> properties = new HashMap<>(boot.buildConsumerProperties());
        details.map(KafkaConnectionDetails::getConsumer).ifPresent(connection -> {
            // as Boot's KafkaAutoConfiguration applies them to its own consumer factory
            properties.put("bootstrap.servers", connection.getBootstrapServers());
            if (StringUtils.hasLength(connection.getSecurityProtocol())) {
                properties.put("security.protocol", connection.getSecurityProtocol());
            }
            SslBundle bundle = connection.getSslBundle();
            if (bundle != null) {
                properties.put("ssl.engine.factory.class", SslBundleSslEngineFactory.class);
                properties.put(SslBundle.class.getName(), bundle);
            }
        });
        TreeSet<String> left = new TreeSet<>();
        for (String name : NOT_FOR_SHARE_GROUPS) {
            Object value = properties.remove(name);
            // Boot always sets isolation.level (read_uncommitted): not worth a line, as no user set it
            if (value != null && !(name.equals("isolation.level") && "read_uncommitted".equals(String.valueOf(value)))) {
                left.add(name);
            }
        }
        if (!left.isEmpty()) {
            log.info("orderless.kafka: {} from spring.kafka.* left out of the share consumer's properties: a share"
                    + " group does not take them (it reads from the earliest record where orderless.kafka.declare set it"
                    + " so); the application's other consumers keep them", left);
        }
        return properties;
    }
}
