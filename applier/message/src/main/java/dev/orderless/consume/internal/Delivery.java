package dev.orderless.consume.internal;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One message delivered to a consumer and the ways to settle it: the seam between the apply logic
 * ({@link ApplyingHandler}) and a protocol. AMQP 0-9-1 settles on the consumer's channel (ack, nack, and a
 * dead letter republished by the recoverer); AMQP 1.0 with the outcomes the broker understands (accepted,
 * released, and a rejection the broker dead-letters itself with the reason as annotations). Each delivery
 * is settled once.
 */
public interface Delivery {
    byte[] body();

    /**
     * The protocol's own message: Spring AMQP's {@code Message} over AMQP 0-9-1, the RabbitMQ AMQP 1.0 client's
     * {@code Message} over AMQP 1.0. It is the carrier of the {@code orderless.consume} observation, so that an
     * observation handler sees what it would see in a listener of that protocol.
     */
    Object message();

    /** A header (0-9-1) or application property or annotation (1.0) the publisher set, as text: the trace context. */
    Optional<String> header(String name);

    /** Done with it: applied or found stale. */
    void accept() throws IOException;

    /** Not handled: back to the queue, for this or another consumer (stopping). */
    void requeue() throws IOException;

    /**
     * Moves it to the dead-letter queue with its reason's {@code kind} ({@code bad_input}, ...), the one-line
     * {@code reason}, and whose operation it held, as far as that is known ({@code subject}). Completes once the letter is there and this delivery settled (possibly later, from another
     * thread); exceptionally, saying why, if the message went back to its queue instead, to come again.
     */
    CompletionStage<Void> deadLetter(String kind, String reason, LetterSubject subject);
}
