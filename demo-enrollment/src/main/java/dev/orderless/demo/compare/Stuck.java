package dev.orderless.demo.compare;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The stuck-handler fault: once armed, the next handler about to write stops for the stall, on its live
 * connection, holding what it was given (a slow downstream call, a long GC pause). Its student is the
 * related key; every other student is unrelated to the fault.
 */
final class Stuck {
    private final Duration stall;
    private final Tally tally;
    private final AtomicBoolean armed = new AtomicBoolean();

    Stuck(Duration stall, Tally tally) {
        this.stall = stall;
        this.tally = tally;
    }

    void arm() {
        armed.set(true);
    }

    /** Whether the next handler about to write will be stuck. */
    boolean armed() {
        return armed.get();
    }

    /** Called by a handler before it writes {@code entity}'s action: the first after arming is stuck. */
    void maybe(String entity) {
        if (armed.compareAndSet(true, false)) {
            tally.faulty(entity);
            try {
                Thread.sleep(stall.toMillis());   // the fault itself: a handler that does not return
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
