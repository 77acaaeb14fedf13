package dev.orderless.boot.internal;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks a leased schedule whether a pass is due, at start and then every interval (at most every minute; the interval
 * is asked again after each ask, so a schedule may ask sooner while it waits for something), on a daemon thread of
 * its own: what compaction, history retention and the history baseline share. A failed ask is a WARN naming what
 * it is for (an {@link Error} an ERROR), counted, and the next ask tries again: the thread lives on, and
 * {@link #failures()} and {@link #lastFailure()} show it.
 */
public final class PassTicker {
    private static final Logger log = LoggerFactory.getLogger(PassTicker.class);

    private final String what;
    private final String thread;
    private final Supplier<Duration> interval;
    private final Runnable ask;
    private final Runnable onFailure;
    private final AtomicLong failures = new AtomicLong();
    private volatile Optional<String> lastFailure = Optional.empty();
    private Optional<ScheduledExecutorService> ticking = Optional.empty();

    /**
     * @param what      what the passes are, for log lines ("compaction of 'students'")
     * @param thread    the thread's name
     * @param interval  the schedule's interval: asks come this often, or every minute if that is sooner
     * @param ask       one ask of the schedule
     * @param onFailure counts a failed ask (a meter)
     */
    public PassTicker(String what, String thread, Duration interval, Runnable ask, Runnable onFailure) {
        this(what, thread, () -> interval, ask, onFailure);
    }

    /**
     * @param what      what the passes are, for log lines ("compaction of 'students'")
     * @param thread    the thread's name
     * @param interval  the pause before the next ask, asked after each ask (at most a minute is taken)
     * @param ask       one ask of the schedule
     * @param onFailure counts a failed ask (a meter)
     */
    public PassTicker(String what, String thread, Supplier<Duration> interval, Runnable ask, Runnable onFailure) {
        this.what = what;
        this.thread = thread;
        this.interval = interval;
        this.ask = ask;
        this.onFailure = onFailure;
    }

    public synchronized void start() {
        if (ticking.isEmpty()) {
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, thread);
                t.setDaemon(true);
                return t;
            });
            executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);   // stop: no ask after the current one
            executor.execute(() -> askOnce(executor));
            ticking = Optional.of(executor);
        }
    }

    private void askOnce(ScheduledExecutorService executor) {
        try {
            ask.run();
            lastFailure = Optional.empty();
        } catch (RuntimeException e) {   // the thread must live on: the next ask tries again
            failed(e, m -> log.warn("{} failed, tried again at the next ask: {}", what, m));
        } catch (Error e) {   // an escaping Error would cancel the schedule without a word
            failed(e, m -> log.error("{} failed with {}, tried again at the next ask", what, m, e));
        } finally {
            try {
                long next = Math.min(interval.get().toMillis(), Duration.ofMinutes(1).toMillis());
                executor.schedule(() -> askOnce(executor), next, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopped) {
                // stopped during this ask: no next one
            }
        }
    }

    private void failed(Throwable e, Consumer<String> logLine) {
        failures.incrementAndGet();
        onFailure.run();
        lastFailure = Optional.of(e.toString());
        logLine.accept(e.toString());
    }

    /** Stops asking; {@code stopPass} tells a pass under way to end at its next question. */
    public synchronized void stop(Runnable stopPass) {
        ticking.ifPresent(executor -> {
            stopPass.run();     // without an interrupt: the pass ends after the unit it is on
            executor.shutdown();
            try {
                if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                    log.warn("{} still under way after 10 s; leaving it", what);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        ticking = Optional.empty();
    }

    public synchronized boolean isRunning() {
        return ticking.isPresent();
    }

    /** Asks that failed. */
    public long failures() {
        return failures.get();
    }

    /** Why the last ask failed; empty once one succeeds. */
    public Optional<String> lastFailure() {
        return lastFailure;
    }
}
