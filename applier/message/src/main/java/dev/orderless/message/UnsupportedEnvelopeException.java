package dev.orderless.message;

import dev.orderless.InvalidInputException;

/**
 * A message in an envelope this consumer does not read: a newer version, or a member that a strict
 * {@link Envelope} refuses. Unlike other bad input it is not the message's fault but a consumer that is behind its
 * producers: it is dead-lettered as {@code unsupported_envelope}, and can be replayed once the consumer reads it.
 */
public class UnsupportedEnvelopeException extends InvalidInputException {
    private static final long serialVersionUID = 1L;

    /**
     * A body in an envelope version this reader does not read.
     *
     * @param message which version the body carries and which this reader reads
     */
    public UnsupportedEnvelopeException(String message) {
        super(Kind.UNSUPPORTED_ENVELOPE, message);
    }
}
