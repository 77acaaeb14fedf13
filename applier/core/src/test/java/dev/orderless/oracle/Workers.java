package dev.orderless.oracle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Competing workers for the property tests: N threads, released together, emptying one queue. */
public final class Workers {
    private Workers() {
    }

    /** One item's work; may throw, which fails the drain. */
    @FunctionalInterface
    public interface Work<T> {
        void accept(T item) throws Exception;
    }

    /**
     * Empties {@code queue} from {@code threads} threads, all started at once; each item goes to {@code work}.
     * Fails with the first worker's error, or after 60 s per worker.
     */
    public static <T> void drain(int threads, ConcurrentLinkedQueue<T> queue, Work<T> work) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> workers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                workers.add(pool.submit(() -> {
                    start.await();
                    for (T item = queue.poll(); item != null; item = queue.poll()) {
                        work.accept(item);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
