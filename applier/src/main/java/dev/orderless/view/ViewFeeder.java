package dev.orderless.view;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.lease.Lease;
import dev.orderless.lease.LeaseProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
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
 * ViewFeeder feeder = ViewFeeder.builder(students, rosterApplier, rosterProjection, leases)
 *         .options(FeederOptions.ofDefaults("view:class_rosters"))
 *         .start();
 * ...
 * feeder.close();   // releases the lease: a standby takes over at once
 * </pre>
 *
 * Guarantees: every change of the source is reflected in the view, after at-least-once processing; a
 * view write from an older source version never overwrites a newer one (each is a guarded apply keyed
 * by the source's {@code _v}); a feeder that lost its lease stops as soon as it notices, and the fence
 * keeps it from committing a position. Correctness rests on those guards, not on clocks. See
 * {@link FeederTerm} for one term's algorithm.
 */
public final class ViewFeeder implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ViewFeeder.class);

    /** Where a feeder is in its life. */
    public enum State { STANDBY, ACTIVE, FAILED, STOPPED }

    private final MongoCollection<BsonDocument> source;
    private final GuardedApplier view;
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

    private ViewFeeder(Builder b) {
        this.source = b.source;
        this.view = b.view;
        this.projection = b.projection;
        this.leases = b.leases;
        this.options = b.options;
        this.metrics = new FeederMetrics(b.meters, b.options.resource());
        this.client = Optional.ofNullable(b.client);
        this.worker = new Thread(this::loop, "view-feeder-" + options.resource());
        worker.setDaemon(true);
    }

    public static Builder builder(MongoCollection<BsonDocument> source, GuardedApplier view, ViewProjection projection,
                                  LeaseProvider leases) {
        return new Builder(source, view, projection, leases);
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
    }

    /** One term as owner; false if the feeder must not continue at all. */
    private boolean term(Lease lease) {
        state = State.ACTIVE;
        metrics.acquired();
        log.info("feeder '{}' active as {} (fence {})", options.resource(), options.owner(), lease.fence());
        boolean release = true;
        try {
            new FeederTerm(source, view, projection, options, metrics, client, lease).run(this::running, () -> !halted);
            return true;
        } catch (LeaseLostException e) {
            state = State.STANDBY;   // before it is counted: whoever sees the loss sees a standby
            metrics.lost();
            release = false;
            log.warn("feeder '{}' lost its lease (fence {}) on {}; back to standby", options.resource(), lease.fence(),
                    e.getMessage());
            return true;
        } catch (FeederStoppedException | InvalidConfigurationException e) {
            failure = e;
            state = State.FAILED;
            log.error("feeder '{}' stopped: {}", options.resource(), e.getMessage());
            return false;
        } catch (OrderlessException | MongoException e) {
            state = State.STANDBY;
            log.warn("feeder '{}': {}; handing the lease back and retrying", options.resource(), e.getMessage());
            pause(options.standbyPoll());
            return true;
        } finally {
            if (halted) {
                lease.abandon();
            } else if (release) {
                lease.close();
                metrics.released();
            } else {
                lease.abandon();
            }
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
        private final MongoCollection<BsonDocument> source;
        private final GuardedApplier view;
        private final ViewProjection projection;
        private final LeaseProvider leases;
        private FeederOptions options;
        private MeterRegistry meters = new SimpleMeterRegistry();
        private MongoClient client;

        private Builder(MongoCollection<BsonDocument> source, GuardedApplier view, ViewProjection projection,
                        LeaseProvider leases) {
            if (source == null || view == null || projection == null || leases == null) {
                throw new InvalidConfigurationException("view feeder: source, view applier, projection and leases are required");
            }
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
