package dev.orderless.publish;

import dev.orderless.apply.Operation;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The AMQP message-id of an operation: 32 hex characters of SHA-256 over its entity and seq, the same for
 * every send of the same operation. Fixed in length on purpose: AMQP carries the message-id as a short
 * string (at most 255 bytes), and an entity id may be up to 512 characters of any script, so an id built
 * from the entity itself could make an operation impossible to send.
 */
public final class MessageIds {
    private MessageIds() {
    }

    /**
     * The message-id of {@code op}.
     *
     * @param op an operation
     * @return 32 lowercase hex characters, the same for every operation with its entity and seq
     */
    public static String of(Operation op) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        sha256.update(op.entity().getBytes(StandardCharsets.UTF_8));
        sha256.update((byte) 0);   // "a" + "12:3" never meets "a1" + "2:3"
        sha256.update(Long.toString(op.seq()).getBytes(StandardCharsets.US_ASCII));
        return HexFormat.of().formatHex(sha256.digest(), 0, 16);
    }
}
