package dev.orderless.view;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.lease.LeaseProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
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
 *
 * <p>Segments ({@link FeederOptions#withSegments}): the source is split into N {@link Segment}s by a
 * stable hash of {@code _id}, each with its own lease ({@code <resource>#i/N}) and position, so N workers,
 * in one process or several, feed one view. Each feeder runs up to {@code workers} of them and claims free
 * ones; processes share them out and hand them over as they join and leave (see {@link SegmentClaims});
 * one that dies has its segments taken over within about a lease ttl. Overlap is harmless: view writes
 * are guarded, whichever segment makes them.
 */
public final class ViewFeeder implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ViewFeeder.class);
    static final int MAX_BARREN_TERMS = 5;

    /** Where a feeder is in its life. */
    public enum State {
        /** Feeding no segment: waiting for a lease, or retrying after a lost lease or a transient failure. */
        STANDBY,
        /** Feeding at least one segment, under its lease. */
        ACTIVE,
        /** A worker stopped for good and is not restarted; {@link ViewFeeder#failure()} says why. */
        FAILED,
        /** Closed: every worker has ended. */
        STOPPED
    }

    private final Parts parts;
    private final SegmentClaims claims;
    private final List<SegmentWorker> workers = new ArrayList<>();

    private ViewFeeder(Builder b) {
        MongoCollection<BsonDocument> source = b.database.getCollection(b.source, BsonDocument.class);
        DeadLetters deadLetters = new DeadLetters(b.database.getCollection(
                b.view.reads().getNamespace().getCollectionName() + "_dead_letters", BsonDocument.class),
                b.options.resource());
        this.parts = new Parts(b.database, source, b.view, deadLetters, b.projection, b.leases, b.options,
                new FeederMetrics(b.meters, b.options.resource()), Optional.ofNullable(b.client));
        this.claims = new SegmentClaims(b.leases, b.options);
        for (int i = 0; i < b.options.workers(); i++) {
            workers.add(new SegmentWorker(parts, claims, i));
        }
    }

    /**
     * A builder of a feeder of {@code view} from {@code source}; nothing runs before {@link Builder#start()}.
     *
     * @param database   holds the source collection, and gets the view's dead letters
     *                   ({@code <view collection>_dead_letters})
     * @param source     the source collection's name
     * @param view       the guarded applier of the view collection
     * @param projection source document to view operations (see {@link ViewProjection} for its contract)
     * @param leases     where the feeders of this view elect one active (per segment)
     * @return the builder, which needs {@link Builder#options} before it can start
     * @throws InvalidConfigurationException if an argument is null or {@code source} is blank
     */
    public static Builder builder(MongoDatabase database, String source, GuardedApplier view, ViewProjection projection,
                                  LeaseProvider leases) {
        return new Builder(database, source, view, projection, leases);
    }

    /**
     * {@code FAILED} if a worker failed; else {@code ACTIVE} while it feeds at least one segment;
     * {@code STANDBY} while it feeds none; {@code STOPPED} once closed.
     *
     * @return the state now, from the workers' states, which change on their own threads
     */
    public State state() {
        boolean active = false;
        boolean stopped = true;
        for (SegmentWorker worker : workers) {
            State state = worker.state();
            if (state == State.FAILED) {
                return State.FAILED;
            }
            active |= state == State.ACTIVE;
            stopped &= state == State.STOPPED;
        }
        return active ? State.ACTIVE : stopped ? State.STOPPED : State.STANDBY;
    }

    /**
     * Why the feeder failed, if it did (the first failed worker's reason).
     *
     * @return the reason; empty unless {@link #state()} is {@code FAILED}
     */
    public Optional<OrderlessException> failure() {
        return workers.stream().map(SegmentWorker::failure).flatMap(Optional::stream).findFirst();
    }

    /**
     * The options this feeder was started with, naming the view's lease rather than a segment's.
     *
     * @return the options
     */
    public FeederOptions options() {
        return parts.options();
    }

    /**
     * The fence of this feeder's lease while it is active; with segments, of the lowest segment it feeds.
     *
     * @return the fence; empty while the feeder feeds no segment
     */
    public OptionalLong fence() {
        return fences().values().stream().mapToLong(Long::longValue).findFirst();   // ordered by segment
    }

    /**
     * The segments this feeder feeds now, each with its lease's fence.
     *
     * @return a new map, ordered by segment index; empty while the feeder feeds no segment
     */
    public Map<Segment, Long> fences() {
        Map<Segment, Long> fences = new TreeMap<>(java.util.Comparator.comparingInt(Segment::index));
        for (SegmentWorker worker : workers) {
            Optional<Segment> segment = worker.segment();
            OptionalLong fence = worker.fence();
            if (segment.isPresent() && fence.isPresent()) {
                fences.put(segment.get(), fence.getAsLong());
            }
        }
        return fences;
    }

    /**
     * While active: how far behind its source the view is, now minus the later of the cluster time of
     * the last change handled and the last poll that found nothing more (so an idle view is not behind);
     * with segments, the largest among those this feeder feeds. Also the gauge
     * {@code orderless.view.lag{resource}}, in seconds. Empty while standing by.
     *
     * @return the lag, never negative; empty while standing by or before the first event or empty poll of a term
     */
    public Optional<Duration> lag() {
        return parts.metrics().lag();
    }

    /**
     * How many change events this view has dead-lettered (reads the dead-letter collection).
     *
     * @return the dead letters recorded under this view's lease by any of its feeders, one per source document
     *         version
     */
    public long deadLettered() {
        return parts.deadLetters().count();
    }

    /** Stops, releasing the leases so a standby takes over at once. */
    @Override
    public void close() {
        parts.stop.countDown();
        join();
        claims.close(true);
    }

    /** Stops without releasing the leases, as a crash would: a standby takes over when they lapse. */
    void halt() {
        parts.halted = true;
        parts.stop.countDown();
        join();
        claims.close(false);
    }

    private void join() {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (SegmentWorker worker : workers) {
            try {
                worker.thread().join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (worker.thread().isAlive()) {
                log.warn("feeder '{}': worker {} did not stop within 30 s", parts.options().resource(),
                        worker.thread().getName());
            }
        }
    }

    /** What the workers of one feeder share: the collections, the projection, the options, stopping. */
    static final class Parts {
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
        private volatile boolean halted;

        Parts(MongoDatabase database, MongoCollection<BsonDocument> source, GuardedApplier view, DeadLetters deadLetters,
              ViewProjection projection, LeaseProvider leases, FeederOptions options, FeederMetrics metrics,
              Optional<MongoClient> client) {
            this.database = database;
            this.source = source;
            this.view = view;
            this.deadLetters = deadLetters;
            this.projection = projection;
            this.leases = leases;
            this.options = options;
            this.metrics = metrics;
            this.client = client;
        }

        MongoDatabase database() {
            return database;
        }

        MongoCollection<BsonDocument> source() {
            return source;
        }

        GuardedApplier view() {
            return view;
        }

        DeadLetters deadLetters() {
            return deadLetters;
        }

        ViewProjection projection() {
            return projection;
        }

        LeaseProvider leases() {
            return leases;
        }

        FeederOptions options() {
            return options;
        }

        FeederMetrics metrics() {
            return metrics;
        }

        Optional<MongoClient> client() {
            return client;
        }

        boolean running() {
            return stop.getCount() > 0;
        }

        boolean halted() {
            return halted;
        }

        void pause(Duration duration) {
            try {
                stop.await(duration.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stop.countDown();
            }
        }
    }

    /** Collects the parts; {@link #start()} starts the worker threads. */
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

        /**
         * How the feeder runs; required.
         *
         * @param options e.g. {@link FeederOptions#ofDefaults(String)}; checked for null only by {@link #start()}
         * @return this builder
         */
        public Builder options(FeederOptions options) {
            this.options = options;
            return this;
        }

        /**
         * Where the feeder's {@code orderless.view.*} metrics go; a private {@link SimpleMeterRegistry} unless set.
         *
         * @param meters the registry
         * @return this builder
         */
        public Builder meters(MeterRegistry meters) {
            this.meters = meters;
            return this;
        }

        /**
         * Needed only for {@link FeederOptions.Bootstrap#OPLOG_START}, to read local.oplog.rs. Without it, a
         * rebuild that would read the oplog fails the feeder with {@link InvalidConfigurationException}.
         *
         * @param client the client of the deployment that holds the source
         * @return this builder
         */
        public Builder client(MongoClient client) {
            this.client = client;
            return this;
        }

        /**
         * Builds a feeder and starts its worker threads (daemon threads), which stand by until they take a
         * lease. Returns at once, without waiting for a lease; each call starts another feeder.
         *
         * @return the running feeder; {@link ViewFeeder#close()} it to stop it and release its leases
         * @throws InvalidConfigurationException if no options were given
         */
        public ViewFeeder start() {
            if (options == null) {
                throw new InvalidConfigurationException("view feeder: options are required, e.g."
                        + " FeederOptions.ofDefaults(\"view:class_rosters\")");
            }
            ViewFeeder feeder = new ViewFeeder(this);
            feeder.workers.forEach(SegmentWorker::start);
            return feeder;
        }
    }
}
