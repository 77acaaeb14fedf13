package dev.orderless.demo;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * SIGTERM or Ctrl-C, turned into a graceful stop: the shutdown hook asks the command to stop, then holds
 * the JVM up (at most {@value #GRACE_SECONDS} s) until the command has closed what it runs and written
 * its last words, which a hook that only set a flag would cut short.
 */
final class StopSignal implements AutoCloseable {
    static final int GRACE_SECONDS = 30;
    private final CountDownLatch stop = new CountDownLatch(1);
    private final CountDownLatch done = new CountDownLatch(1);
    private final Thread hook = new Thread(this::stopAndWait, "stop-on-signal");

    StopSignal() {
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Waits up to {@code millis} for a stop; true once one was asked for. */
    boolean await(long millis) throws InterruptedException {
        return stop.await(millis, TimeUnit.MILLISECONDS);
    }

    boolean stopped() {
        return stop.getCount() == 0;
    }

    private void stopAndWait() {
        stop.countDown();
        try {
            done.await(GRACE_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The command is done: let the JVM go (or, with no signal, take the hook back). */
    @Override
    public void close() {
        done.countDown();
        if (!stopped()) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // already shutting down: the hook will find done counted down
            }
        }
    }
}
