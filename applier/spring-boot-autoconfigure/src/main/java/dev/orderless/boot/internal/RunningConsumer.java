package dev.orderless.boot.internal;

import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/** A started consumer, whatever its protocol, as the Boot bean sees it. */
public interface RunningConsumer extends AutoCloseable {
    /** True while it consumes. */
    boolean isRunning();

    /** Messages being retried now after a transient failure. */
    int retrying();

    /** What it waits for while it consumes but cannot apply (MongoDB unavailable), if so. */
    Optional<String> waitingFor();

    /** Stops it and closes what it opened. */
    @Override
    void close();

    /** A consumer seen through these methods; {@code close} stops it and closes what it opened. */
    static RunningConsumer of(BooleanSupplier running, IntSupplier retrying, Supplier<Optional<String>> waitingFor,
                              Runnable close) {
        return new RunningConsumer() {
            @Override
            public boolean isRunning() {
                return running.getAsBoolean();
            }

            @Override
            public int retrying() {
                return retrying.getAsInt();
            }

            @Override
            public Optional<String> waitingFor() {
                return waitingFor.get();
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }
}
