package dev.orderless.kafka;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * One record of a dead-letter topic as the share consumer wrote it.
 *
 * @param kind      the reason's kind: {@code bad_input}, {@code oversized}, {@code held_too_long}, {@code delivery_limit}, ...
 * @param reason    why, one line
 * @param entity    the entity of the operation it held, where that is known
 * @param seq       its seq, where known
 * @param body      the record's value, as it was consumed
 * @param partition where it is in the dead-letter topic
 * @param offset    where it is in its partition
 */
public record KafkaDeadLetter(String kind, String reason, Optional<String> entity, OptionalLong seq, byte[] body,
                              int partition, long offset) {
}
