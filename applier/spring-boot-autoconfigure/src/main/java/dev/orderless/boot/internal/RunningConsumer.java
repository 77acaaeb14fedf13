package dev.orderless.boot.internal;

/** A started consumer, whatever its protocol, as the Boot bean sees it. */
public interface RunningConsumer extends AutoCloseable {
    /** True while it consumes. */
    boolean isRunning();

    /** Messages held now, retried after a failure. */
    int holding();

    /** Stops it and closes what it opened. */
    @Override
    void close();
}
