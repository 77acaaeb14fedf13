package dev.orderless.message;

import dev.orderless.apply.Operation;

/**
 * Turns a message body into one {@link Operation}. Implementations throw
 * {@link dev.orderless.InvalidInputException} with a short, single-line reason for anything they cannot
 * decode; the consumer dead-letters such messages with that reason.
 */
@FunctionalInterface
public interface OperationDecoder {
    Operation decode(byte[] body);
}
