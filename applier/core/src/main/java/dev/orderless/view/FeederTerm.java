package dev.orderless.view;

import com.mongodb.MongoException;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import dev.orderless.lease.Lease;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One term as the active feeder, from taking the lease to losing, releasing or stopping. It runs the loop
 * and leaves each decision to its own class: where the stream starts ({@link BootstrapChoice}), what one
 * event means ({@link EventRoute}), when to commit ({@link CommitPolicy}); {@link SourceStream} reads
 * MongoDB, {@link TermLease} holds the lease and commits positions.
 *
 * <ol>
 *   <li>Read the committed {@link Position}. If it belongs to another source collection (the source was
 *       dropped and recreated, its uuid changed), stop with {@link FeederStoppedException} saying what to
 *       do: the view holds the old source's entries.
 *   <li>Open the change stream where {@link BootstrapChoice} says: after the committed token if there is
 *       one. With no token, or one that is no longer resumable (history lost), rebuild: open the stream
 *       first, then scan the source from the primary with majority read concern and project every
 *       document, commit the stream's token, then drain the stream (a write made before the start, or
 *       before a crashed predecessor processed it, is still seen; the overlap is harmless because view
 *       writes are guarded). {@code OPLOG_START} replays the oplog instead, only when it still reaches
 *       back to the last committed change.
 *   <li>Poll the stream. For each event, the {@link Projector}: a document is projected, a delete takes
 *       back what the source contributed, a poison event is tried, then dead-lettered or fatal. An empty
 *       poll that came back early (the embedded server does not wait for data) is waited out to the poll
 *       wait, so an idle feeder does not spin. History lost while reading: rebuild as in step 2.
 *   <li>Every {@code commitEvery} events or {@code commitInterval}, commit the position (also a quiet
 *       stream's post-batch token) to the lease document, only while owner and fence still match.
 *   <li>Drop, rename or invalidate of the source: stop with {@link FeederStoppedException}.
 *   <li>On a clean stop, commit the latest position for the successor.
 * </ol>
 * Before every poll and every scanned document, the lease is renewed; a lost lease ends the term with
 * {@link LeaseLostException}.
 */
final class FeederTerm {
    private static final Logger log = LoggerFactory.getLogger(FeederTerm.class);

    private final MongoCollection<BsonDocument> source;
    private final Projector projector;
    private final FeederOptions options;
    private final FeederMetrics metrics;
    private final FeederMetrics.Lag lag;
    private final Segment segment;
    private final SourceStream stream;
    private final TermLease lease;
    private final Clock clock;

    FeederTerm(MongoDatabase database, MongoCollection<BsonDocument> source, Projector projector, FeederOptions options,
               FeederMetrics metrics, FeederMetrics.Lag lag, Segment segment, Optional<MongoClient> client, Lease lease) {
        this.source = source;
        this.projector = projector;
        this.options = options;
        this.metrics = metrics;
        this.lag = lag;
        this.segment = segment;
        this.stream = new SourceStream(source, options, client);
        this.lease = new TermLease(lease, database, source, options.resource(), metrics);
        this.clock = options.lease().clock();
    }

    /** True once this term committed a position: it made progress. */
    boolean committedAny() {
        return lease.committedAny();
    }

    /**
     * Runs until {@code running} turns false (returns), the lease is lost or the source is gone (throws).
     * On the way out, if {@code clean}, the latest position is committed for the successor.
     */
    void run(BooleanSupplier running, BooleanSupplier clean) {
        Optional<Position> stored = lease.begin();
        MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor;
        try {
            cursor = open(stored, running);
        } catch (StoppedDuringScan e) {
            return;   // nothing to commit: a partial scan is no position
        }
        try {
            CommitPolicy commits = new CommitPolicy(options.commitEvery(), options.commitInterval(),
                    stored.map(Position::token), clock.instant());
            while (running.getAsBoolean()) {
                lease.alive("poll");
                ChangeStreamDocument<BsonDocument> event;
                long polled = System.nanoTime();
                try {
                    event = cursor.tryNext();
                } catch (MongoException e) {
                    if (!BootstrapChoice.historyLost(e)) {
                        throw e;
                    }
                    log.warn("'{}': change stream history lost while reading ({}); rebuilding", options.resource(),
                            e.getMessage());
                    cursor.close();
                    try {
                        cursor = rebuild(true, running);
                    } catch (StoppedDuringScan stopped) {
                        return;
                    }
                    continue;
                }
                if (event != null) {
                    handle(event);
                    commits.event();
                } else {
                    lag.caughtUp();
                    idle(polled, running);
                }
                Optional<BsonDocument> due = commits.due(Optional.ofNullable(cursor.getResumeToken()), clock.instant());
                if (due.isPresent()) {
                    lease.commit(due.get(), "commit");
                    commits.committed(due.get(), clock.instant());
                }
            }
            // a clean stop: hand the successor the latest position, so it replays as little as possible
            Optional<BsonDocument> last = commits.onStop(Optional.ofNullable(cursor.getResumeToken()));
            if (clean.getAsBoolean() && last.isPresent()) {
                lease.commitForSuccessor(last.get());
            }
        } finally {
            cursor.close();
        }
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
        BootstrapChoice.Start start = BootstrapChoice.atTermStart(options.resource(), stored, options.bootstrap(),
                stream::oldestOplogEntry);
        if (start instanceof BootstrapChoice.Resume resume) {
            try {
                log.info("'{}': resuming after the committed token (fence {})", options.resource(), lease.fence());
                return stream.resumeAfter(resume.token());
            } catch (MongoException e) {
                if (!BootstrapChoice.historyLost(e)) {
                    throw e;
                }
                log.warn("'{}': the committed resume token is no longer resumable ({}); rebuilding, never from now",
                        options.resource(), e.getMessage());
                return rebuild(true, running);
            }
        }
        return bootstrap(start, running);
    }

    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> rebuild(boolean historyLost,
                                                                                BooleanSupplier running) {
        return bootstrap(BootstrapChoice.rebuild(options.resource(), historyLost, options.bootstrap(),
                lease.lastClusterTime(), stream::oldestOplogEntry), running);
    }

    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> bootstrap(BootstrapChoice.Start start,
                                                                                  BooleanSupplier running) {
        if (start instanceof BootstrapChoice.ReplayOplog replay) {
            log.info("'{}': replaying the oplog from {} (the last committed change)", options.resource(), replay.from());
            metrics.bootstrap(replay.historyLost());
            return stream.startAt(replay.from());
        }
        boolean historyLost = ((BootstrapChoice.Scan) start).historyLost();
        // open first, so that every write after this point is in the stream; then scan what came before
        MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = stream.fromNow();
        try {
            long[] scanned = {0};
            stream.scan(() -> {
                if (!running.getAsBoolean()) {
                    throw new StoppedDuringScan();
                }
                lease.alive("scan");
            }, doc -> {
                if (segment.owns(doc.get("_id"))) {
                    projector.document(doc);
                    scanned[0]++;
                }
            });
            log.info("'{}': bootstrapped from a scan of {} documents (fence {})", options.resource(), scanned[0],
                    lease.fence());
            metrics.bootstrap(historyLost);
            BsonDocument token = cursor.getResumeToken();
            if (token != null) {
                lease.commit(token, "commit after bootstrap");
            }
            return cursor;
        } catch (RuntimeException | Error e) {
            cursor.close();
            throw e;
        }
    }

    private void handle(ChangeStreamDocument<BsonDocument> event) {
        if (event.getClusterTime() != null) {
            lease.eventAt(event.getClusterTime());
            lag.eventAt(event.getClusterTime());   // another segment's event too: this one is as far as it
        }
        EventRoute route = EventRoute.of(event.getOperationType(), event.getFullDocument(), event.getDocumentKey(),
                segment);
        if (route == EventRoute.IGNORE) {
            return;
        }
        metrics.event();
        switch (route) {
            case STOP -> throw new FeederStoppedException("the source collection '"
                    + source.getNamespace().getCollectionName() + "' saw " + event.getOperationType().getValue()
                    + "; the view feeder '" + options.resource() + "' stopped. " + lease.whatToDo());
            case DELETE -> {
                BsonDocument key = event.getDocumentKey();
                projector.deleted(key == null ? null : key.get("_id"));
            }
            case SKIP -> metrics.skipped();   // deleted before the lookup: its delete event takes back what it gave
            case PROJECT -> projector.document(event.getFullDocument());
            case IGNORE -> throw new IllegalStateException("handled above");
        }
    }

    /** {@code close()} came during a rebuild's scan: stop at once, commit nothing. */
    private static final class StoppedDuringScan extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StoppedDuringScan() {
            super("stopped during the scan", null, false, false);
        }
    }
}
