package dev.orderless.demo.compare;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The CPU time a set of threads spent over a measured stretch: the consumers of one contestant, whatever runs
 * them (a listener container, a broker client, a MongoDB driver), as long as their threads can be told apart:
 * by thread group ({@link #ofGroups}; start a contestant's consumers {@link #within} a group of its own, and every
 * thread they start, and those threads start, is in it) or by name ({@link #ofNamed}).
 *
 * <p>{@link #start()} takes each thread's CPU time as its baseline; {@link #sample()} records each thread's
 * latest; {@link #nanos()} sums, over every thread ever sampled, its latest minus its baseline (a thread first
 * seen after the start counts from zero: it was born in the stretch). A thread that ends between two samples
 * keeps its last sampled figure, so sample often enough that what a dying thread spent after its last sample
 * is small (a killed consumer's threads); thread ids are not reused within a JVM, so a new thread is never
 * mistaken for an old one. Pure but for {@link Threads}: {@link #ofGroups} reads the JVM's threads.
 */
public final class CpuMeter {
    /** The cumulative CPU time, in ns, of each live thread that counts, by thread id. */
    @FunctionalInterface
    public interface Threads {
        /** @return each live thread's CPU time so far, ns, by thread id */
        Map<Long, Long> cpuNanos();
    }

    private final Threads threads;
    private final Map<Long, Long> baseline = new HashMap<>();
    private final Map<Long, Long> latest = new HashMap<>();

    /** @param threads the threads that count and their CPU time so far */
    public CpuMeter(Threads threads) {
        this.threads = threads;
    }

    /**
     * The live threads of {@code groups} (and their subgroups), read through the JVM's {@link ThreadMXBean}: a
     * consumer process's threads are those created from its own thread group ({@link ConsumerProcess#within}).
     */
    public static CpuMeter ofGroups(Supplier<? extends Collection<ThreadGroup>> groups) {
        ThreadMXBean mx = threadCpu();
        return new CpuMeter(() -> {
            Map<Long, Long> cpu = new HashMap<>();
            groups.get().forEach(group -> read(mx, group, thread -> true, cpu));
            return cpu;
        });
    }

    /**
     * The live threads of this JVM whose name {@code named} accepts, read through the JVM's {@link ThreadMXBean}:
     * threads that no group sets apart, such as a server's pool (the embedded MongoDB's workers).
     */
    public static CpuMeter ofNamed(Predicate<String> named) {
        ThreadMXBean mx = threadCpu();
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        ThreadGroup all = root;
        return new CpuMeter(() -> {
            Map<Long, Long> cpu = new HashMap<>();
            read(mx, all, thread -> named.test(thread.getName()), cpu);
            return cpu;
        });
    }

    private static ThreadMXBean threadCpu() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM cannot measure a thread's CPU time (ThreadMXBean)");
        }
        if (!mx.isThreadCpuTimeEnabled()) {
            mx.setThreadCpuTimeEnabled(true);
        }
        return mx;
    }

    private static void read(ThreadMXBean mx, ThreadGroup group, Predicate<Thread> counts, Map<Long, Long> into) {
        Thread[] live = new Thread[group.activeCount() + 16];
        int n = group.enumerate(live, true);
        for (Thread thread : Arrays.asList(live).subList(0, n)) {
            if (counts.test(thread)) {
                long nanos = mx.getThreadCpuTime(thread.getId());
                if (nanos >= 0) {   // -1: it ended meanwhile; its last sample stands
                    into.put(thread.getId(), nanos);
                }
            }
        }
    }

    /**
     * Runs {@code work} in a new thread of {@code group} and waits for it: every thread that {@code work} starts
     * (and they in turn, unless a thread factory names another group) belongs to {@code group}, so that
     * {@link #ofGroups} measures it. A failure of {@code work} is rethrown (a checked one wrapped), naming
     * {@code group}.
     */
    public static <T> T within(ThreadGroup group, Callable<T> work) {
        FutureTask<T> task = new FutureTask<>(work);
        Thread starter = new Thread(group, task, group.getName() + "-start");
        starter.start();
        try {
            return task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting in " + group.getName(), e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(group.getName() + " did not start: " + e.getCause(), e.getCause());
        }
    }

    /** The stretch begins: every thread's CPU time so far is not counted. */
    public synchronized void start() {
        baseline.clear();
        latest.clear();
        baseline.putAll(threads.cpuNanos());
        latest.putAll(baseline);
    }

    /** Records each live thread's CPU time (a thread's figure never goes down). */
    public synchronized void sample() {
        threads.cpuNanos().forEach((id, nanos) -> latest.merge(id, nanos, Math::max));
    }

    /** CPU time spent since {@link #start()} by every thread sampled, as of the last sample, in ns. */
    public synchronized long nanos() {
        long total = 0;
        for (Map.Entry<Long, Long> e : latest.entrySet()) {
            total += Math.max(0, e.getValue() - baseline.getOrDefault(e.getKey(), 0L));
        }
        return total;
    }

    /** The last sample's CPU time over {@code messages}. */
    public synchronized CpuPerMessage per(long messages) {
        return new CpuPerMessage(nanos(), messages);
    }

    /**
     * Samples every {@code interval} on a daemon thread of its own (not one of the measured ones) until the
     * returned handle is closed; closing takes the last sample, and fails if sampling failed.
     */
    public Sampling sampling(Duration interval) {
        Sampling sampling = new Sampling(interval);
        sampling.thread.start();
        return sampling;
    }

    /** A running {@link #sampling}. */
    public final class Sampling implements AutoCloseable {
        private final Thread thread;
        private volatile boolean stopped;
        private volatile RuntimeException failed;

        private Sampling(Duration interval) {
            thread = new Thread(() -> {
                try {
                    while (!stopped) {
                        sample();
                        LockSupport.parkNanos(interval.toNanos());
                    }
                } catch (RuntimeException e) {
                    failed = e;   // said by close(): a figure from a sampler that died would be short
                }
            }, "compare-cpu-sampler");
            thread.setDaemon(true);
        }

        /** Stops the sampler thread, without a last sample; idempotent. */
        public void stop() {
            stopped = true;
            LockSupport.unpark(thread);
        }

        /** Stops sampling and takes the last sample. */
        @Override
        public void close() {
            stopped = true;
            LockSupport.unpark(thread);
            try {
                thread.join(Duration.ofSeconds(10).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (failed != null) {
                throw new IllegalStateException("CPU sampling failed: " + failed, failed);
            }
            sample();
        }
    }
}
