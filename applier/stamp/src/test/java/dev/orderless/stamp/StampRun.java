package dev.orderless.stamp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Runs stampers from many threads at once and keeps every stamp in the order each thread got it. */
final class StampRun {
    /** One stamp: which instance and thread took it, for which entity, and the seq. */
    record Stamp(int instance, int thread, String entity, long seq) {
    }

    private StampRun() {
    }

    /** {@code threads} threads per stamper, each taking {@code perThread} stamps over {@code entities}. */
    static List<List<Stamp>> run(List<Stamper> stampers, int threads, int perThread, int entities) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(stampers.size() * threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<List<Stamp>>> futures = new ArrayList<>();
            for (int i = 0; i < stampers.size(); i++) {
                for (int t = 0; t < threads; t++) {
                    int instance = i;
                    int thread = t;
                    Callable<List<Stamp>> work = () -> {
                        start.await();
                        List<Stamp> stamps = new ArrayList<>(perThread);
                        for (int n = 0; n < perThread; n++) {
                            String entity = "e" + ((n * 7 + thread) % entities);
                            stamps.add(new Stamp(instance, thread, entity, stampers.get(instance).next(entity)));
                        }
                        return stamps;
                    };
                    futures.add(pool.submit(work));
                }
            }
            start.countDown();
            List<List<Stamp>> perThreadStamps = new ArrayList<>();
            for (Future<List<Stamp>> f : futures) {
                perThreadStamps.add(f.get(5, TimeUnit.MINUTES));
            }
            return perThreadStamps;
        } finally {
            pool.shutdownNow();
        }
    }
}
