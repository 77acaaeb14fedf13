package dev.orderless.view;

import static com.mongodb.client.model.Filters.ne;

import com.mongodb.MongoException;
import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.OperationType;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.StoredFields;
import dev.orderless.lease.Lease;
import java.time.Clock;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
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
 *   <li>Open the change stream (full documents): after the stored resume token if there is one; if that
 *       token is no longer resumable (history lost), or there is none, bootstrap: open the stream first,
 *       then scan the source and project every document, then drain the stream (figures 4a/4b: a write
 *       made before the start, or before a crashed predecessor processed it, is still seen; the overlap
 *       is harmless because view writes are guarded).
 *   <li>For each event: project the full document at its {@code _v} (unless this term already projected
 *       that version) and apply every view operation. If a
 *       view write was stale, read the lease: a successor may have written newer data (figure 3); if the
 *       lease is gone, stop at once.
 *   <li>Every {@code commitEvery} events or {@code commitInterval}, commit the resume token (also a quiet
 *       stream's post-batch token) to the lease document, only while owner and fence still match.
 *   <li>Drop, rename or invalidate of the source: stop with {@link FeederStoppedException}.
 * </ol>
 */
final class FeederTerm {
    private static final Logger log = LoggerFactory.getLogger(FeederTerm.class);
    /** ChangeStreamHistoryLost, ChangeStreamFatalError, CappedPositionLost, InvalidResumeToken. */
    private static final Set<Integer> HISTORY_LOST = Set.of(286, 280, 136, 260);
    private static final Set<OperationType> FATAL = Set.of(OperationType.DROP, OperationType.RENAME,
            OperationType.DROP_DATABASE, OperationType.INVALIDATE);

    private final MongoCollection<BsonDocument> source;
    private final GuardedApplier view;
    private final ViewProjection projection;
    private final FeederOptions options;
    private final FeederMetrics metrics;
    private final Optional<MongoClient> client;
    private final Lease lease;
    private final Clock clock;
    /**
     * The last {@code _v} this term projected per source document. With full-document lookup, a burst of
     * events for one document all carry its latest version; projecting it again would only write
     * duplicates (and read the lease for each), so such events are skipped. Bounded; forgetting an entry
     * only costs a harmless re-projection.
     */
    private final Map<BsonValue, Long> projected = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<BsonValue, Long> eldest) {
            return size() > 100_000;
        }
    };

    FeederTerm(MongoCollection<BsonDocument> source, GuardedApplier view, ViewProjection projection,
               FeederOptions options, FeederMetrics metrics, Optional<MongoClient> client, Lease lease) {
        this.source = source;
        this.view = view;
        this.projection = projection;
        this.options = options;
        this.metrics = metrics;
        this.client = client;
        this.lease = lease;
        this.clock = options.lease().clock();
    }

    /**
     * Runs until {@code running} turns false (returns), the lease is lost or the source is gone (throws).
     * On the way out, if {@code clean}, the latest position is committed for the successor.
     */
    void run(BooleanSupplier running, BooleanSupplier clean) {
        MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = open();
        try {
            BsonDocument committed = lease.position().orElse(null);
            long sinceCommit = 0;
            Instant lastCommit = clock.instant();
            while (running.getAsBoolean()) {
                alive("poll");
                ChangeStreamDocument<BsonDocument> event;
                try {
                    event = cursor.tryNext();
                } catch (MongoException e) {
                    if (!historyLost(e)) {
                        throw e;
                    }
                    log.warn("'{}': change stream history lost while reading ({}); rebuilding from a scan",
                            options.resource(), e.getMessage());
                    cursor.close();
                    cursor = bootstrap(true);
                    continue;
                }
                if (event != null) {
                    handle(event);
                    sinceCommit++;
                }
                boolean due = sinceCommit >= options.commitEvery()
                        || !clock.instant().isBefore(lastCommit.plus(options.commitInterval()));
                BsonDocument token = cursor.getResumeToken();
                if (due && token != null && !token.equals(committed)) {
                    if (!lease.commit(token)) {
                        throw new LeaseLostException("commit");
                    }
                    metrics.commit();
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
                    && lease.commit(token)) {
                metrics.commit();
            }
        } finally {
            cursor.close();
        }
    }

    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> open() {
        Optional<BsonDocument> token = lease.position();
        if (token.isPresent()) {
            try {
                log.info("'{}': resuming after the committed token (fence {})", options.resource(), lease.fence());
                return stream().resumeAfter(token.get()).cursor();
            } catch (MongoException e) {
                if (!historyLost(e)) {
                    throw e;
                }
                log.warn("'{}': the committed resume token is no longer resumable ({}); rebuilding from a scan,"
                        + " never from now", options.resource(), e.getMessage());
                return bootstrap(true);
            }
        }
        return bootstrap(false);
    }

    private MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> bootstrap(boolean historyLost) {
        if (options.bootstrap() == FeederOptions.Bootstrap.OPLOG_START) {
            BsonTimestamp oldest = oldestOplogEntry();
            log.info("'{}': no usable resume token; starting at the oldest oplog entry {}", options.resource(), oldest);
            MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = stream().startAtOperationTime(oldest).cursor();
            metrics.bootstrap(historyLost);
            return cursor;
        }
        // open first, so that every write after this point is in the stream; then scan what came before
        MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = stream().cursor();
        long scanned = 0;
        for (BsonDocument doc : source.find()) {
            alive("scan");
            project(doc);
            scanned++;
        }
        log.info("'{}': bootstrapped from a scan of {} documents (fence {})", options.resource(), scanned, lease.fence());
        metrics.bootstrap(historyLost);
        BsonDocument token = cursor.getResumeToken();
        if (token != null && !lease.commit(token)) {
            throw new LeaseLostException("commit after bootstrap");
        }
        return cursor;
    }

    private void handle(ChangeStreamDocument<BsonDocument> event) {
        metrics.event();
        if (FATAL.contains(event.getOperationType())) {
            throw new FeederStoppedException("the source collection '" + source.getNamespace().getCollectionName()
                    + "' saw " + event.getOperationType().getValue() + "; the view feeder '" + options.resource()
                    + "' stopped. Recreate the source (and clear the view if it should be rebuilt), then restart it");
        }
        BsonDocument doc = event.getFullDocument();
        if (doc == null) {
            // a delete, or a document deleted before the lookup: orderless never deletes entity documents
            metrics.skipped();
            return;
        }
        project(doc);
    }

    private void project(BsonDocument doc) {
        BsonValue v = doc.get(StoredFields.VERSION);
        if (v == null || !v.isNumber() || v.asNumber().longValue() <= 0) {
            metrics.skipped();
            log.warn("'{}': document {} has no {}; not written by orderless, skipped", options.resource(),
                    doc.get(StoredFields.ID), StoredFields.VERSION);
            return;
        }
        long version = v.asNumber().longValue();
        BsonValue id = doc.get(StoredFields.ID);
        Long already = projected.get(id);
        if (already != null && already >= version) {
            metrics.skipped();
            return;
        }
        boolean stale = false;
        for (Operation op : projection.project(doc, version)) {
            if (op.seq() != version) {
                throw new InvalidConfigurationException("view projection for '" + options.resource() + "' returned " + op
                        + " with seq " + op.seq() + "; every view operation must carry the source _v " + version);
            }
            Outcome outcome = view.apply(op);
            metrics.write(outcome);
            stale |= !outcome.isApplied();
        }
        // a stale write may mean a successor already wrote newer data: are we still the owner?
        if (stale && !lease.verify()) {
            throw new LeaseLostException("a stale view write");
        }
        projected.put(id, version);
    }

    private void alive(String when) {
        lease.heartbeat();
        if (!lease.isHeld()) {
            throw new LeaseLostException(when);
        }
    }

    private ChangeStreamIterable<BsonDocument> stream() {
        return source.watch().fullDocument(FullDocument.UPDATE_LOOKUP)
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

    static boolean historyLost(MongoException e) {
        return HISTORY_LOST.contains(e.getCode());
    }

}
