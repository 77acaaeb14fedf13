package dev.orderless.boot.internal;

import dev.orderless.InvalidConfigurationException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * How a Boot consumer bean starts, whatever its broker: at the context's start it starts the consumer, or, where the
 * broker does not answer, starts anyway saying why and tries again every interval; the same watch restarts a consumer
 * that stopped on its own (a consumer thread or link that ended for good), so that it never stays down in silence until
 * the process restarts. A refusal fails the context's start; on the watch's thread it is said, once per reason.
 *
 * <p>What health reads ({@link #current()}, {@link #waiting()}) never waits for a start in progress.
 *
 * @param <C> the running consumer
 */
public final class ConsumerWatch<C extends AutoCloseable> {
    /** How often the watch looks unless a test asks otherwise. */
    public static final long RETRY_SECONDS = 5;

    private final Logger log;
    private final String subject;
    private final Supplier<Optional<String>> before;
    private final Supplier<C> attempt;
    private final Function<C, Boolean> running;
    private final Function<RuntimeException, Optional<String>> notAnswering;
    private volatile Optional<C> consuming = Optional.empty();
    private volatile Optional<String> waiting = Optional.empty();
    private Optional<ScheduledExecutorService> watching = Optional.empty();
    private boolean started;
    private Duration interval = Duration.ofSeconds(RETRY_SECONDS);

    /**
     * @param log          the bean's logger, which says each start, wait and refusal
     * @param subject      the consumer as the log names it: {@code consumer on 'enrollment.ops'}
     * @param before       what must happen before it consumes, while it has not (the history's start to be decided):
     *                     asked at each try, without waiting
     * @param attempt      declares what the consumer needs and starts it; an {@link InvalidConfigurationException} is a
     *                     refusal
     * @param running      whether a started consumer still consumes
     * @param notAnswering what an exception of {@code attempt} says when it means the broker did not answer (then the
     *                     watch tries again); empty for an exception that must propagate
     */
    public ConsumerWatch(Logger log, String subject, Supplier<Optional<String>> before, Supplier<C> attempt,
                         Function<C, Boolean> running, Function<RuntimeException, Optional<String>> notAnswering) {
        this.log = log;
        this.subject = subject;
        this.before = before;
        this.attempt = attempt;
        this.running = running;
        this.notAnswering = notAnswering;
    }

    /** How often the watch looks, before {@link #start(String)}: {@value #RETRY_SECONDS} s by default. */
    public synchronized void every(Duration interval) {
        this.interval = interval;
    }

    /**
     * Starts the consumer, or says why not and leaves it to the watch (a refusal throws), then starts the watch.
     *
     * @param threadName the watch thread's name
     */
    public synchronized void start(String threadName) {
        if (started) {
            return;
        }
        started = true;
        tryStart(true);
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, threadName);
            thread.setDaemon(true);
            return thread;
        });
        executor.scheduleWithFixedDelay(this::watch, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        watching = Optional.of(executor);
    }

    /** One look of the watch: starts the consumer if it is not consuming, restarting one that stopped. Never throws. */
    public synchronized void watch() {
        try {
            if (!started) {
                return;
            }
            Optional<C> current = consuming;
            if (current.isPresent() && !running.apply(current.get())) {
                String why = "it stopped consuming on its own (a consumer thread or its link ended); restarting it";
                log.error("{}: {}", subject, why);
                consuming = Optional.empty();
                waiting = Optional.of(why);
                try {
                    current.get().close();
                } catch (Exception e) {
                    log.warn("{}: closing the stopped consumer failed ({})", subject, e.toString());
                }
            }
            if (consuming.isEmpty()) {
                tryStart(false);
            }
        } catch (RuntimeException e) {
            // an exception would end the schedule in silence: say it (once per reason), and keep trying
            String why = "it failed: " + e;
            if (!waiting.equals(Optional.of(why))) {
                log.error("{} cannot start, {}; trying again every {} s", subject, why, RETRY_SECONDS);
            }
            waiting = Optional.of(why);
        }
    }

    private boolean tryStart(boolean atStart) {
        Optional<String> first = before.get();
        if (first.isPresent()) {
            return notYet(first.get());
        }
        try {
            consuming = Optional.of(attempt.get());
            waiting.ifPresent(why -> log.info("{} started after: {}", subject, why));
            waiting = Optional.empty();
            return true;
        } catch (InvalidConfigurationException e) {
            if (atStart) {
                throw e;
            }
            if (!waiting.equals(Optional.of(e.getMessage()))) {   // on the watch's thread: nobody to throw to
                log.error("{} cannot start: {}", subject, e.getMessage());
            }
            waiting = Optional.of(e.getMessage());
            return false;
        } catch (RuntimeException e) {
            return notYet(notAnswering.apply(e).orElseThrow(() -> e));
        }
    }

    /** Not started, saying {@code why}: said once per reason, and tried again by the watch. */
    private boolean notYet(String why) {
        if (!waiting.equals(Optional.of(why))) {
            log.warn("{} not started, {}; trying again every {} s (its health says so meanwhile)", subject, why,
                    RETRY_SECONDS);
        }
        waiting = Optional.of(why);
        return false;
    }

    /** Stops the watch, then closes the consumer. */
    public synchronized void stop() {
        watching.ifPresent(ScheduledExecutorService::shutdownNow);
        watching = Optional.empty();
        try {
            Optional<C> current = consuming;
            if (current.isPresent()) {
                current.get().close();
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(subject + ": closing failed", e);
        } finally {
            consuming = Optional.empty();
            started = false;
        }
    }

    /** True from start to stop, also while waiting for the broker. */
    public synchronized boolean isStarted() {
        return started;
    }

    /** The consumer started, if any (it may have stopped since: the watch finds out). */
    public Optional<C> current() {
        return consuming;
    }

    /** Why it is not consuming though started, if so. */
    public Optional<String> waiting() {
        return waiting;
    }

    /** How often the watch looks. */
    public synchronized Duration interval() {
        return interval;
    }
}
