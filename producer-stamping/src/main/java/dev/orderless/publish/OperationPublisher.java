package dev.orderless.publish;

import dev.orderless.apply.Operation;
import java.util.List;

/**
 * Publishes operations as canonical JSON envelopes and returns only once the broker took every one: over
 * AMQP 0-9-1 with publisher confirms ({@link ConfirmingPublisher}), over AMQP 1.0 with the broker's
 * {@code accepted} outcome ({@code dev.orderless.amqp10.Amqp10Publisher}). A message the broker did not take is
 * sent again, a bounded number of times; then {@link PublishFailedException} names what was not taken. A
 * re-send may duplicate a message the broker took but never said so: the seq makes that harmless.
 */
public interface OperationPublisher {
    /** Publishes one operation and returns once the broker took it. */
    default void publish(Operation op) {
        publishAll(List.of(op));
    }

    /** Publishes every operation and returns once the broker took all of them. */
    void publishAll(List<? extends Operation> ops);

    /**
     * Publishes bodies exactly as given (for tools and tests: a demo that also sends bad input, say), with
     * the same waiting and re-sends.
     */
    void publishRaw(List<byte[]> bodies);
}
