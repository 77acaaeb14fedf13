package dev.orderless.kafka;

import dev.orderless.OrderlessException;

/** Kafka did not take every record of a publish: the message says how many and why; sending again is safe. */
public final class KafkaPublishException extends OrderlessException {
    KafkaPublishException(String message, Throwable cause) {
        super(message, cause);
    }
}
