package dev.orderless.consume.internal;

import dev.orderless.Backoff;
import java.time.Duration;

/**
 * What the broker-neutral apply logic takes from a consumer's options, whatever its broker: each broker's options
 * (RabbitMQ's {@code ConsumerOptions}, Kafka's {@code ShareConsumerOptions}) validated these already.
 *
 * @param source          where messages come from (a queue, a topic): the {@code queue} tag of the consumer's meters
 * @param deadLetters     where poison goes (a queue, a topic), for log lines
 * @param maxMessageBytes larger bodies are dead-lettered unread
 * @param maxHold         how long one message may fail transiently while MongoDB serves others
 * @param backoff         the pauses between retries
 */
public record HandlerSettings(String source, String deadLetters, int maxMessageBytes, Duration maxHold,
                              Backoff backoff) {
}
