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

    /** A consumer seen through its three methods; {@code close} stops it and closes what it opened. */
    static RunningConsumer of(java.util.function.BooleanSupplier running, java.util.function.IntSupplier holding,
                              Runnable close) {
        return new RunningConsumer() {
            @Override
            public boolean isRunning() {
                return running.getAsBoolean();
            }

            @Override
            public int holding() {
                return holding.getAsInt();
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }
}
