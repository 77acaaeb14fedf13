package dev.orderless.boot;

import dev.orderless.boot.internal.PassTicker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.context.SmartLifecycle;

/**
 * A leased schedule asked by a {@link PassTicker} for as long as the application runs: what
 * {@link OrderlessCompaction}, {@link OrderlessHistoryRetention} and {@link OrderlessHistoryBaseline} share.
 * Starting resumes the schedule and the asks; stopping tells a pass under way to end after the unit it is on.
 * Failed asks are counted in {@code <meter>.failures{collection}}.
 */
abstract class TickedPasses implements SmartLifecycle {
    private final AtomicLong passes = new AtomicLong();
    private final PassTicker ticker;

    /**
     * @param what       what the passes are, for log lines ("compaction of 'students'")
     * @param thread     the ticker thread's name
     * @param meter      the name its meters start with ("orderless.compaction")
     * @param collection the meters' {@code collection} tag
     */
    TickedPasses(String what, String thread, Duration interval, String meter, String collection, MeterRegistry meters) {
        Counter failures = Counter.builder(meter + ".failures").description(what + ": passes that failed")
                .tag("collection", collection).register(meters);
        this.ticker = new PassTicker(what, thread, () -> nextAskIn(interval), () -> {
            if (runIfDue()) {
                passes.incrementAndGet();
            }
        }, failures::increment);
    }

    /**
     * The pause before the next ask: {@code interval} (the schedule's), unless a schedule waits for something that
     * cannot wait that long.
     */
    Duration nextAskIn(Duration interval) {
        return interval;
    }

    /** One ask of the schedule: true if it ran a pass. */
    abstract boolean runIfDue();

    /** Lets the schedule run passes again. */
    abstract void resumeSchedule();

    /** Tells a pass under way to end at its next question, and later asks to do nothing. */
    abstract void stopSchedule();

    @Override
    public void start() {
        resumeSchedule();
        ticker.start();
    }

    @Override
    public void stop() {
        ticker.stop(this::stopSchedule);
    }

    @Override
    public boolean isRunning() {
        return ticker.isRunning();
    }

    /** Passes this instance ran. */
    public long passes() {
        return passes.get();
    }

    /** Asks that failed. */
    public long failures() {
        return ticker.failures();
    }

    /** Why the last ask failed; empty once one succeeded. */
    public Optional<String> lastFailure() {
        return ticker.lastFailure();
    }
}
