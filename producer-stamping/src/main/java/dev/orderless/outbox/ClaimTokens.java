package dev.orderless.outbox;

import java.util.UUID;

/**
 * The tokens one relay claims its batches under: its owner name, a random id of this relay instance and
 * the round. Owner names need not be unique (two relays in one JVM share the default, host and pid), and
 * rounds restart with every relay, so without the instance id two relays could claim under the same token
 * and one's release would hand back the other's batch.
 */
final class ClaimTokens {
    private final String prefix;
    private long round;

    ClaimTokens(String owner) {
        this.prefix = owner + ":" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    /** A token no other relay uses, and this one uses once. Called by the relay's one loop thread. */
    String next() {
        return prefix + (++round);
    }
}
