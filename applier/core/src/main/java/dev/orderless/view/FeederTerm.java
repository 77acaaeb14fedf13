package dev.orderless.view;

import static com.mongodb.client.model.Filters.ne;

import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.OperationType;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.lease.Lease;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One term as the active feeder, from taking the lease to losing, releasing or stopping.
 *
 * <ol>
 *   <li>Read the committed {@link Position}. If it belongs to another source collection (the source was
 *       dropped and recreated, its uuid changed), stop with {@link FeederStoppedException} saying what to
 *       do: the view holds the old source's entries.
 *   <li>Open the change stream (full documents, {@code updateDescription} projected away, so an event
 *       stays far from 16 MB): after the committed token if there is one. With no token, or one that is no
 *       longer resumable (history lost), rebuild: open the stream first, then scan the source from the
 *       primary with majority read concern and project every document, then drain the stream (a write
 *       made before the start, or before a crashed predecessor processed it, is still seen; the overlap is
 *       harmless because view writes are guarded). {@code OPLOG_START} replays the oplog instead, only
 *       when it still reaches back to the last committed change.
 *   <li>For each event, the {@link Projector}: a document is projected, a delete takes back what the
 *       source contributed, a poison event is tried, then dead-lettered or fatal.
 *   <li>Every {@code commitEvery} events or {@code commitInterval}, commit the position (also a quiet
 *       stream's post-batch token) to the lease document, only while owner and fence still match.
 *   <li>Drop, rename or invalidate of the source: stop with {@link FeederStoppedException}.
 * </ol>
 * An empty poll that came back early (the embedded server does not wait for data) is waited out to the
 * poll wait, so an idle feeder does not spin.
 */
final class FeederTerm {
    private static final Logger log = LoggerFactory.getLogger(FeederTerm.class);
    /** ChangeStreamHistoryLost, ChangeStreamFatalError, CappedPositionLost, InvalidResumeToken. */
    private static final Set<Integer> HISTORY_LOST = Set.of(286, 280, 136, 260);
    private static final Set<OperationType> FATAL = Set.of(OperationType.DROP, OperationType.RENAME,
            OperationType.DROP_DATABASE, OperationType.INVALIDATE);

    private final MongoDatabase database;
    private final MongoCollection<BsonDocument> source;
    private final Projector projector;
    private final FeederOptions options;
    private final FeederMetrics metrics;
    private final FeederMetrics.Lag lag;
    private final Segment segment;
    private final Optional<MongoClient> client;
    private final Lease lease;
    private final Clock clock;
    private Optional<BsonValue> sourceUuid = Optional.empty();
    private Optional<BsonValue> committedUuid = Optional.empty();
    private Optional<BsonTimestamp> lastClusterTime = Optional.empty();
    private boolean committedAny;

    FeederTerm(MongoDatabase database, MongoCollection<BsonDocument> source, Projector projector, FeederOptions options,
               FeederMetrics metrics, FeederMetrics.Lag lag, Segment segment, Optional<MongoClient> client, Lease lease) {
        this.database = database;
        this.source = source;
        this.projector = projector;
        this.options = options;
        this.metrics = metrics;
        this.lag = lag;
        this.segment = segment;
        this.client = client;
        this.lease = lease;
        this.clock = options.lease().clock();
    }

    /** True once this term committed a position: it made progress. */
    boolean committedAny() {
        return committedAny;
    }

    /**
     * Runs until {@code running} turns false (returns), the lease is lost or the source is gone (throws).
     * On the way out, if {@code clean}, the latest position is committed for the successor.
     */
    void run(BooleanSupplier running, BooleanSupplier clean) {
        Optional<Position> stored = lease.position().map(Position::read);
        sourceUuid = SourceIdentity.uuid(database, source.getNamespace().getCollectionName());
        committedUuid = stored.flatMap(Position::source);
        SourceIdentity.requireSame(options.resource(), source, committedUuid, sourceUuid, lease);
        lastClusterTime = stored.flatMap(Position::clusterTime);
        MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor;
        try {
            cursor = open(stored, running);
        } catch (StoppedDuringScan e) {
            return;   // nothing to commit: a partial scan is no position
        }
        try {
            BsonDocument committed = stored.map(Position::token).orElse(null);
            long sinceCommit = 0;
            Instant lastCommit = clock.instant();
            while (running.getAsBoolean()) {
                alive("poll");
                ChangeStreamDocument<BsonDocument> event;
                long polled = System.nanoTime();
                try {
                    event = cursor.tryNext();
                } catch (MongoException e) {
                    if (!historyLost(e)) {
                        throw e;
                    }
                    log.warn("'{}': change stream history lost while reading ({}); rebuilding", options.resource(),
                            e.getMessage());
                    cursor.close();
                    try {
                        cursor = bootstrap(true, running);
                    } catch (StoppedDuringScan stopped) {
                        return;
                    }
                    continue;
                }
                if (event != null) {
                    handle(event);
                    sinceCommit++;
                } else {
                    lag.caughtUp();
                    idle(polled, running);
                }
                boolean due = sinceCommit >= options.commitEvery()
                        || !clock.instant().isBefore(lastCommit.plus(options.commitInterval()));
                BsonDocument token = cursor.getResumeToken();
                if (due && token != null && !token.equals(committed)) {
                    commit(token, "commit");
                    committed = token;
                    sinceCommit = 0;
                    lastCommit = clock.instant();
                } else if (due) {
                    lastCommit = clock.instant();
                }
            }
            // a clean stop: hand the successor the latest position, so it replays as little as possible
            BsonDocument token = cursor.getResumeToken();
            if (clean.getAsBoolean() && token != null && !token.equals(committed) && lease.isHeld()
                    && lease.commit(position(token))) {
                metrics.commit();
            }
        } finally {
            cursor.close();
        }
    }

    private void commit(BsonDocument token, String when) {
        if (!lease.commit(position(token))) {
            throw new LeaseLostException(when);
        }
        metrics.commit();
        committedAny = true;
    }

    private BsonDocument position(BsonDocument token) {
        if (sourceUuid.isEmpty()) {   // the source did not exist yet when the term began
            sourceUuid = SourceIdentity.uuid(database, source.getNamespace().getCollectionName());
            SourceIdentity.requireSame(options.resource(), source, committedUuid, sourceUuid, lease);
        }
        return new Position(token, sourceUuid, lastClusterTime).toDocument();
    }

    /** An empty poll that returned well before the poll wait is waited out, so an idle feeder does not spin. */
    private void idle(long polledAtNanos, BooleanSupplier running) {
        long wait = options.pollWait().toNanos();
        long deadline = polledAtNanos + wait;
        while (running.getAsBoolean() && System.nanoTime() < deadline - wait / 4) {
            LockSupport.parkNanos(Math.min(deadline - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }

    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> open(Optional<Position> stored,
                                                                             BooleanSupplier running) {
        if (stored.isPresent()) {
            try {
                log.info("'{}': resuming after the committed token (fence {})", options.resource(), lease.fence());
                return stream().resumeAfter(stored.get().token()).cursor();
            } catch (MongoException e) {
                if (!historyLost(e)) {
                    throw e;
                }
                log.warn("'{}': the committed resume token is no longer resumable ({}); rebuilding, never from now",
                        options.resource(), e.getMessage());
                return bootstrap(true, running);
            }
        }
        return bootstrap(false, running);
    }

    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> bootstrap(boolean historyLost,
                                                                                  BooleanSupplier running) {
        if (options.bootstrap() == FeederOptions.Bootstrap.OPLOG_START) {
            Optional<BsonTimestamp> from = OplogReach.startAt(options.resource(), lastClusterTime, this::oldestOplogEntry);
            if (from.isPresent()) {
                log.info("'{}': replaying the oplog from {} (the last committed change)", options.resource(), from.get());
                metrics.bootstrap(historyLost);
                return stream().startAtOperationTime(from.get()).cursor();
            }
        }
        // open first, so that every write after this point is in the stream; then scan what came before
        MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = stream().cursor();
        try {
            long scanned = 0;
            MongoCollection<BsonDocument> primary = source.withReadPreference(ReadPreference.primary())
                    .withReadConcern(ReadConcern.MAJORITY);
            try (MongoCursor<BsonDocument> scan = primary.find().iterator()) {
                while (scan.hasNext()) {
                    if (!running.getAsBoolean()) {
                        throw new StoppedDuringScan();
                    }
                    alive("scan");
                    BsonDocument doc = scan.next();
                    if (segment.owns(doc.get("_id"))) {
                        projector.document(doc);
                        scanned++;
                    }
                }
            }
            log.info("'{}': bootstrapped from a scan of {} documents (fence {})", options.resource(), scanned,
                    lease.fence());
            metrics.bootstrap(historyLost);
            BsonDocument token = cursor.getResumeToken();
            if (token != null) {
                commit(token, "commit after bootstrap");
            }
            return cursor;
        } catch (RuntimeException | Error e) {
            cursor.close();
            throw e;
        }
    }

    private void handle(ChangeStreamDocument<BsonDocument> event) {
        if (event.getClusterTime() != null) {
            lastClusterTime = Optional.of(event.getClusterTime());
            lag.eventAt(event.getClusterTime());   // another segment's event too: this one is as far as it
        }
        if (!FATAL.contains(event.getOperationType()) && !owned(event)) {
            return;
        }
        metrics.event();
        if (FATAL.contains(event.getOperationType())) {
            throw new FeederStoppedException("the source collection '" + source.getNamespace().getCollectionName()
                    + "' saw " + event.getOperationType().getValue() + "; the view feeder '" + options.resource()
                    + "' stopped. " + SourceIdentity.whatToDo(options.resource(), lease));
        }
        if (event.getOperationType() == OperationType.DELETE) {
            BsonDocument key = event.getDocumentKey();
            projector.deleted(key == null ? null : key.get("_id"));
            return;
        }
        BsonDocument doc = event.getFullDocument();
        if (doc == null) {
            // deleted before the lookup: its delete event follows and takes back what it contributed
            metrics.skipped();
            return;
        }
        projector.document(doc);
    }

    /**
     * True if the event's source document is this segment's: by the full document's {@code _id} (the
     * embedded server's update events carry a wrong {@code documentKey}), a delete's by its key.
     */
    private boolean owned(ChangeStreamDocument<BsonDocument> event) {
        if (segment.count() == 1) {
            return true;
        }
        BsonDocument doc = event.getFullDocument();
        BsonDocument key = event.getDocumentKey();
        BsonValue id = doc != null ? doc.get("_id") : key != null ? key.get("_id") : null;
        return id == null || segment.owns(id);   // no id at all: let the projector say what is wrong
    }

    private void alive(String when) {
        lease.heartbeat();
        if (!lease.isHeld()) {
            throw new LeaseLostException(when);
        }
    }

    private ChangeStreamIterable<BsonDocument> stream() {
        return source.watch(List.of(Aggregates.project(Projections.exclude("updateDescription"))))
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .maxAwaitTime(options.pollWait().toMillis(), TimeUnit.MILLISECONDS);
    }

    private BsonTimestamp oldestOplogEntry() {
        MongoClient mongo = client.orElseThrow(() -> new InvalidConfigurationException(
                "feeder '" + options.resource() + "': OPLOG_START needs the MongoClient (builder.client(...))"));
        Document first = mongo.getDatabase("local").getCollection("oplog.rs").find(ne("op", "n"))
                .sort(new Document("$natural", 1)).limit(1).first();
        if (first == null) {
            throw new FeederStoppedException("feeder '" + options.resource() + "': local.oplog.rs is empty or absent;"
                    + " OPLOG_START needs a replica set, use SCAN");
        }
        return first.get("ts", BsonTimestamp.class);
    }

    /** {@code close()} came during a rebuild's scan: stop at once, commit nothing. */
    private static final class StoppedDuringScan extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StoppedDuringScan() {
            super("stopped during the scan", null, false, false);
        }
    }

    static boolean historyLost(MongoException e) {
        return HISTORY_LOST.contains(e.getCode());
    }

}
