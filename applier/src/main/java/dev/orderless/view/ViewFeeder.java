package dev.orderless.view;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds a denormalized view from a source collection's change stream. Run one on every node: the lease
 * makes exactly one active per resource; the others stand by, take over within about one lease ttl after
 * the active one dies, and at once after it shuts down.
 *
 * <pre>
 * ViewFeeder feeder = ViewFeeder.builder(db, "students", rosterApplier, rosterProjection, leases)
 *         .options(FeederOptions.ofDefaults("view:class_rosters"))
 *         .start();
 * ...
 * feeder.close();   // releases the lease: a standby takes over at once
 * </pre>
 *
 * Guarantees: every change of the source is reflected in the view, after at-least-once processing,
 * hard deletes of source documents included (what the document contributed is taken back); a view write
 * from an older source version never overwrites a newer one (each is a guarded apply keyed by the
 * source's {@code _v}); a feeder that lost its lease stops as soon as it notices, and the fence keeps it
 * from committing a position. Correctness rests on those guards, not on clocks. See {@link FeederTerm}
 * for one term's algorithm and {@link Projector} for one event's.
 *
 * <p>Never silent: a change event that keeps failing is dead-lettered to {@code <view>_dead_letters} in
 * the given database (or, with {@link FeederOptions.PoisonPolicy#FAIL}, stops the feeder); every other
 * failure of a term either hands over (MongoDB unreachable: {@code STANDBY}, retried) or ends in
 * {@link State#FAILED} with {@link #failure()} saying why, an ERROR line and
 * {@code orderless.view.failures{reason}}. A feeder whose terms keep failing without committing any
 * progress ({@value #MAX_BARREN_TERMS} in a row) stops as {@code FAILED} too, rather than hand the same
 * failure around for ever.
 */
public final class ViewFeeder implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ViewFeeder.class);
    static final int MAX_BARREN_TERMS = 5;

    /** Where a feeder is in its life. */
    public enum State { STANDBY, ACTIVE, FAILED, STOPPED }

    private final MongoDatabase database;
    private final MongoCollection<BsonDocument> source;
    private final GuardedApplier view;
    private final DeadLetters deadLetters;
    private final ViewProjection projection;
    private final LeaseProvider leases;
    private final FeederOptions options;
    private final FeederMetrics metrics;
    private final Optional<MongoClient> client;
    private final CountDownLatch stop = new CountDownLatch(1);
    private final Thread worker;
    private volatile State state = State.STANDBY;
    private volatile OrderlessException failure;
    private volatile boolean halted;
    private volatile long fence = NO_FENCE;
    private static final long NO_FENCE = -1;
    private int barrenTerms;

    private ViewFeeder(Builder b) {
        this.database = b.database;
        this.source = b.database.getCollection(b.source, BsonDocument.class);
        this.view = b.view;
        this.deadLetters = new DeadLetters(b.database.getCollection(
                b.view.reads().getNamespace().getCollectionName() + "_dead_letters", BsonDocument.class),
                b.options.resource());
        this.projection = b.projection;
        this.leases = b.leases;
        this.options = b.options;
        this.metrics = new FeederMetrics(b.meters, b.options.resource());
        this.client = Optional.ofNullable(b.client);
        this.worker = new Thread(this::loop, "view-feeder-" + options.resource());
        worker.setDaemon(true);
    }

    /**
     * @param database   holds the source collection, and gets the view's dead letters
     *                   ({@code <view collection>_dead_letters})
     * @param source     the source collection's name
     * @param view       the guarded applier of the view collection
     * @param projection source document to view operations (see {@link ViewProjection} for its contract)
     * @param leases     where the feeders of this view elect one active
     */
    public static Builder builder(MongoDatabase database, String source, GuardedApplier view, ViewProjection projection,
                                  LeaseProvider leases) {
        return new Builder(database, source, view, projection, leases);
    }

    public State state() {
        return state;
    }

    /** Why the feeder failed, if it did. */
    public Optional<OrderlessException> failure() {
        return Optional.ofNullable(failure);
    }

    public FeederOptions options() {
        return options;
    }

    /** The fence of this feeder's lease while it is the active one. */
    public OptionalLong fence() {
        long current = fence;
        return current == NO_FENCE ? OptionalLong.empty() : OptionalLong.of(current);
    }

    /**
     * While active: how far behind its source the view is, now minus the later of the cluster time of
     * the last change handled and the last poll that found nothing more (so an idle view is not behind).
     * Also the gauge {@code orderless.view.lag{resource}}, in seconds. Empty while standing by.
     */
    public Optional<Duration> lag() {
        return metrics.lag();
    }

    /** How many change events this view has dead-lettered (reads the dead-letter collection). */
    public long deadLettered() {
        return deadLetters.count();
    }

    /** Stops, releasing the lease so a standby takes over at once. */
    @Override
    public void close() {
        stop.countDown();
        join();
    }

    /** Stops without releasing the lease, as a crash would: a standby takes over when it lapses. */
    void halt() {
        halted = true;
        stop.countDown();
        join();
    }

    private void join() {
        try {
            worker.join(Duration.ofSeconds(30).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (worker.isAlive()) {
            log.warn("feeder '{}' did not stop within 30 s", options.resource());
        }
    }

    private boolean running() {
        return stop.getCount() > 0;
    }

    private void loop() {
        try {
            while (running()) {
                Optional<Lease> acquired;
                try {
                    acquired = leases.tryAcquire(options.resource(), options.owner());
                } catch (OrderlessException e) {
                    log.warn("feeder '{}': cannot reach the lease ({}); retrying", options.resource(), e.getMessage());
                    pause(options.standbyPoll());
                    continue;
                }
                if (acquired.isEmpty()) {
                    state = State.STANDBY;
                    pause(options.standbyPoll());
                    continue;
                }
                if (!term(acquired.get())) {
                    return;
                }
            }
            state = State.STOPPED;
        } catch (Throwable e) {   // never end the thread unseen
            fail(e, "bug");
        }
    }

    /** One term as owner; false if the feeder must not continue at all. */
    private boolean term(Lease lease) {
        state = State.ACTIVE;
        fence = lease.fence();
        metrics.acquired();
        log.info("feeder '{}' active as {} (fence {})", options.resource(), options.owner(), lease.fence());
        boolean release = true;
        boolean handBack = false;
        Projector projector = new Projector(view, projection, options, metrics, lease, Optional.of(deadLetters),
                lease::heartbeat);
        FeederTerm term = new FeederTerm(database, source, projector, options, metrics, client, lease);
        try {
            term.run(this::running, () -> !halted);
            return true;
        } catch (LeaseLostException e) {
            state = State.STANDBY;   // before it is counted: whoever sees the loss sees a standby
            metrics.lost();
            release = false;
            log.warn("feeder '{}' lost its lease (fence {}) on {}; back to standby", options.resource(), lease.fence(),
                    e.getMessage());
            return true;
        } catch (FeederStoppedException | InvalidConfigurationException e) {
            fail(e, "failed");
            return false;
        } catch (OrderlessException | MongoException e) {
            barrenTerms = term.committedAny() ? 1 : barrenTerms + 1;
            metrics.failure("transient");
            if (barrenTerms >= MAX_BARREN_TERMS) {
                fail(new FeederStoppedException("feeder '" + options.resource() + "': " + barrenTerms + " terms in a row"
                        + " failed without committing progress, the last with: " + e.getMessage()
                        + ". Check MongoDB and the source collection, then restart the feeder"), "failed");
                return false;
            }
            state = State.STANDBY;
            handBack = true;
            log.warn("feeder '{}': {}; handing the lease back and retrying", options.resource(), e.getMessage());
            return true;
        } catch (RuntimeException | Error e) {
            fail(e, "bug");
            return false;
        } finally {
            fence = NO_FENCE;
            metrics.termEnded();
            if (term.committedAny() && !handBack) {
                barrenTerms = 0;
            }
            if (halted || !release) {
                lease.abandon();
            } else {
                lease.close();
                metrics.released();
            }
            if (handBack) {
                pause(options.standbyPoll());   // after the release, so a standby gets its turn
            }
        }
    }

    /** The end of this feeder: FAILED, the reason kept, an ERROR line, a metric. */
    private void fail(Throwable e, String reason) {
        failure = e instanceof OrderlessException o ? o
                : new FeederStoppedException("feeder '" + options.resource() + "' stopped on an unexpected "
                        + e.getClass().getSimpleName() + ": " + e.getMessage());
        state = State.FAILED;
        metrics.failure(reason);
        if (e instanceof OrderlessException) {
            log.error("feeder '{}' stopped: {}", options.resource(), e.getMessage());
        } else {
            log.error("feeder '{}' stopped on an unexpected error", options.resource(), e);
        }
    }

    private void pause(Duration duration) {
        try {
            stop.await(duration.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop.countDown();
        }
    }

    /** Collects the parts; {@link #start()} starts the worker thread. */
    public static final class Builder {
        private final MongoDatabase database;
        private final String source;
        private final GuardedApplier view;
        private final ViewProjection projection;
        private final LeaseProvider leases;
        private FeederOptions options;
        private MeterRegistry meters = new SimpleMeterRegistry();
        private MongoClient client;

        private Builder(MongoDatabase database, String source, GuardedApplier view, ViewProjection projection,
                        LeaseProvider leases) {
            if (database == null || source == null || source.isBlank() || view == null || projection == null
                    || leases == null) {
                throw new InvalidConfigurationException("view feeder: database, source collection name, view applier,"
                        + " projection and leases are required");
            }
            this.database = database;
            this.source = source;
            this.view = view;
            this.projection = projection;
            this.leases = leases;
        }

        public Builder options(FeederOptions options) {
            this.options = options;
            return this;
        }

        public Builder meters(MeterRegistry meters) {
            this.meters = meters;
            return this;
        }

        /** Needed only for {@link FeederOptions.Bootstrap#OPLOG_START}, to read local.oplog.rs. */
        public Builder client(MongoClient client) {
            this.client = client;
            return this;
        }

        public ViewFeeder start() {
            if (options == null) {
                throw new InvalidConfigurationException("view feeder: options are required, e.g."
                        + " FeederOptions.ofDefaults(\"view:class_rosters\")");
            }
            ViewFeeder feeder = new ViewFeeder(this);
            feeder.worker.start();
            return feeder;
        }
    }
}
