package dev.orderless.testing.chaos;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** A bounded wait for a condition another party makes true (the broker, the consumers). */
final class Poll {
    private Poll() {
    }

    /** True once {@code condition} holds, checked every {@code every}; false if it did not within {@code atMost}. */
    static boolean until(BooleanSupplier condition, Duration atMost, Duration every) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(every.toNanos());
        }
        return true;
    }
}
