package dev.orderless.console.fleet;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.boot.OrderlessProperties;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Reports this instance to the fleet: every {@code interval}, on one daemon thread of its own, it replaces this
 * instance's document in the fleet's collection with what runs in it now ({@link InstanceSnapshot}), so any instance's
 * console shows every instance. On a clean stop it writes its last report with {@code stoppedAt}, and the fleet shows
 * it stopped at once rather than gone three intervals later.
 *
 * <p>What it guarantees:
 * <ul>
 *   <li>Its thread never ends by a failure: a report that fails (MongoDB down, a snapshot figure throwing) is tried
 *       again at the next interval. One WARN line names the collection when reports start failing, one INFO line
 *       when they succeed again: a line per failure streak, not per attempt.
 *   <li>No report while stopped: {@link #stop()} ends the schedule before its goodbye, and a report under way when
 *       it is asked to stop is waited for (bounded), so the goodbye is the last write.
 *   <li>Every write is bounded by the driver's operation timeout (the interval, at least a second; two seconds for
 *       the goodbye), so a MongoDB that does not answer cannot hold a shutdown.
 *   <li>A report stays in the collection a day after it was last written (a TTL index, created by the first report
 *       that can), so the fleet shows an instance gone for a day, then forgets it.
 * </ul>
 */
public final class FleetReporter implements SmartLifecycle, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FleetReporter.class);
    private static final Duration GOODBYE_TIMEOUT = Duration.ofSeconds(2);

    private final FleetReports reports;
    private final Instance instance;
    private final InstanceSnapshot snapshot;
    private final Duration interval;
    private final Clock clock;
    private ScheduledExecutorService scheduler;   // guarded by this; null while stopped
    private volatile boolean running;
    private volatile boolean failing;
    private volatile Optional<String> failure = Optional.empty();   // why the last report failed, while failing
    private volatile boolean indexed;
    private volatile boolean indexFailing;

    /**
     * A reporter, not yet reporting: {@link #start()} begins.
     *
     * @param collection the fleet's collection ({@code orderless.console.fleet.collection} in orderless.database)
     * @param instance   this instance
     * @param snapshot   what runs in it
     * @param interval   how often it reports (at least a second)
     * @param clock      the clock its reports are stamped by
     * @throws InvalidConfigurationException if a part is missing or the interval is under a second
     */
    public FleetReporter(MongoCollection<Document> collection, Instance instance, InstanceSnapshot snapshot,
                         Duration interval, Clock clock) {
        if (collection == null || instance == null || snapshot == null || clock == null) {
            throw InvalidConfigurationException.refused("fleet reporter", "every part", "must be given");
        }
        if (interval == null || interval.compareTo(Duration.ofSeconds(1)) < 0) {
            throw InvalidConfigurationException.refused("orderless.console.fleet.interval",
                    "must be at least 1s (as 5s), was " + interval);
        }
        this.reports = new FleetReports(collection);
        this.instance = instance;
        this.snapshot = snapshot;
        this.interval = interval;
        this.clock = clock;
    }

    /**
     * The reporter of this process, as {@code orderless.console.fleet.*} says, not yet reporting.
     *
     * @param database    orderless.database
     * @param fleet       where it reports, and how often
     * @param snapshot    what runs in it
     * @param application {@code spring.application.name}, if set
     * @return the reporter, with a fresh instance id
     */
    public static FleetReporter of(MongoDatabase database, OrderlessProperties.Console.Fleet fleet,
                                   InstanceSnapshot snapshot, Optional<String> application) {
        Clock clock = Clock.systemUTC();
        return new FleetReporter(database.getCollection(fleet.collection()),
                Instance.ofThisProcess(application, clock.instant()), snapshot, fleet.interval(), clock);
    }

    /** @return the instance it reports */
    public Instance instance() {
        return instance;
    }

    /** @return how often it reports */
    public Duration interval() {
        return interval;
    }

    /** @return what runs in this instance, as it reports it */
    public InstanceSnapshot snapshot() {
        return snapshot;
    }

    /** Why this instance's last report could not be written, while its reports fail (its own page says so). */
    Optional<String> failure() {
        return running ? failure : Optional.empty();
    }

    FleetReports reports() {
        return reports;
    }

    Clock clock() {
        return clock;
    }

    /** This instance's report as it would write it now: what the console reads of itself, fresher than its last. */
    Document report(Instant now) {
        return FleetReports.report(instance, snapshot, interval, now, Optional.empty());
    }

    /** Begins reporting: at once, then every interval. Idempotent. */
    @Override
    public synchronized void start() {
        if (scheduler != null) {
            return;
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "orderless-fleet-report");
            thread.setDaemon(true);   // never what keeps a JVM from exiting
            return thread;
        });
        running = true;
        scheduler.scheduleWithFixedDelay(this::tick, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        log.info("instance {} reports itself to the fleet in '{}' every {}", instance.id(), reports.name(), interval);
    }

    /** Ends reporting and says goodbye: the fleet shows this instance stopped. Idempotent. */
    @Override
    public synchronized void stop() {
        if (!endSchedule()) {
            return;
        }
        Instant now = clock.instant();
        try {
            // its last report with stoppedAt, not a new one: a new one reads each feeder's dead letters from
            // MongoDB, unbounded, which made a stop with MongoDB down wait the driver's 30 s per feeder (review2)
            reports.goodbye(instance.id(), now, GOODBYE_TIMEOUT);
        } catch (RuntimeException e) {   // the fleet will show it gone three intervals later instead
            log.warn("instance {} could not tell the fleet in '{}' it stopped ({}); it is shown gone once silent for"
                    + " {} intervals", instance.id(), reports.name(), oneLine(e), FleetReports.SILENT_INTERVALS);
        }
    }

    /** As a killed process does: the schedule ends, no goodbye is written (for tests of a gone instance). */
    synchronized void halt() {
        endSchedule();
    }

    /** Ends the schedule, waiting (bounded) for a report under way; false if it was not running. */
    private boolean endSchedule() {
        if (scheduler == null) {
            return false;
        }
        running = false;
        scheduler.shutdown();
        try {
            if (!scheduler.awaitTermination(interval.toMillis() + 2000, TimeUnit.MILLISECONDS)) {
                scheduler.shutdownNow();
            }
        } catch (InterruptedException e) {
            scheduler.shutdownNow();
            Thread.currentThread().interrupt();
        }
        scheduler = null;
        return true;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** As {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    /** One report; catches everything, so the schedule never ends by a failure. */
    private void tick() {
        if (!running) {
            return;
        }
        try {
            Optional<RuntimeException> noIndex = indexed ? Optional.empty() : index();
            reports.write(report(clock.instant()), interval);
            // said only when MongoDB answers the reports: a MongoDB that does not answer is the report's one line
            noIndex.filter(e -> !indexFailing).ifPresent(e -> {
                indexFailing = true;
                log.warn("the fleet's collection '{}' has no TTL index on {} ({}); reports are kept until it is"
                        + " created: check the index that exists there", reports.name(), FleetReports.REPORTED_AT,
                        oneLine(e));
            });
            failure = Optional.empty();
            if (failing) {
                failing = false;
                log.info("instance {} reports itself to the fleet in '{}' again", instance.id(), reports.name());
            }
        } catch (RuntimeException | Error e) {   // an escaping throwable would cancel the schedule without a word
            failure = Optional.of(oneLine(e));
            if (!failing) {
                failing = true;
                log.warn("instance {} could not report itself to the fleet in '{}' ({}); trying again every {}: check"
                        + " that MongoDB answers", instance.id(), reports.name(), oneLine(e), interval);
            }
        }
    }

    /** The TTL index, until created once; what refused it, if anything. */
    private Optional<RuntimeException> index() {
        try {
            reports.ensureIndex(interval);
            indexed = true;
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of(e);
        }
    }

    static String oneLine(Throwable e) {
        String message = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
        return e.getClass().getSimpleName() + ": " + message;
    }
}
