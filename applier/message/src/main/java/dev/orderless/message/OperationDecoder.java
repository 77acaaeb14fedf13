package dev.orderless.message;

import dev.orderless.apply.Operation;

/**
 * Turns a message body into one {@link Operation}. Implementations throw
 * {@link dev.orderless.InvalidInputException} with a short, single-line reason for anything they cannot
 * decode; the consumer dead-letters such messages with that reason.
 */
@FunctionalInterface
public interface OperationDecoder {
    /**
     * The operation a message body holds.
     *
     * @throws dev.orderless.InvalidInputException if the body is not one, saying why
     */
    Operation decode(byte[] body);
}
