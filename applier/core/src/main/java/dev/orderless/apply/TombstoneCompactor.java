package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Projections.include;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.unset;

import dev.orderless.apply.internal.CounterBook;

import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.internal.MongoErrors;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drops tombstones older than a grace period, so tombstone arrays stay bounded under churn, and raises
 * {@code _gcFloor} to the highest dropped seq so that what the dropped tombstones decided stays decided.
 *
 * <p>Safe only while no message older than the grace period can still be delivered: count the message
 * TTL, every retry and backoff, and the time a message may wait in the dead-letter queue before it is
 * replayed. If that is violated, nothing is corrupted: an operation at or below {@code _gcFloor} on an
 * element with no entry left is refused as {@link Outcome#BEYOND_HORIZON} (dead-letter it).
 *
 * <p>Per document, a compare-and-set on {@code _v}:
 * <ol>
 *   <li>read it; pick the tombstones written before {@code now - grace} (by {@code at});
 *   <li>write the remaining tombstones and {@code _gcFloor = max(_gcFloor, highest dropped seq)} with
 *       filter {@code {_id, _v: <read>}}; if a concurrent write moved {@code _v}, start again.
 * </ol>
 * Counters are folded the same way, by a seq prefix: a counter's increments recorded before {@code now - grace},
 * from its lowest seq up to the first one that is younger (a run of them by its newest), leave {@code _inc.<field>}
 * and {@code _incRuns.<field>} and raise {@code _incFloor.<field>} to the highest of them; their deltas are in the
 * value already, and the others stay, coalesced into runs. An increment at or below
 * that floor arriving later cannot be told from one already counted, and is refused as beyond the horizon; a delete
 * above it stays exact, one below it is refused the same way.
 *
 * <p>Live elements, registers, counter values and {@code _floor} are never touched: the observable state does not
 * change.
 * Reads go to the primary; a document that cannot be compacted (one written by something else, say) is
 * skipped with a WARN naming it, so one document never stops a pass.
 */
public final class TombstoneCompactor {
    private static final Logger log = LoggerFactory.getLogger(TombstoneCompactor.class);

    private final MongoCollection<BsonDocument> collection;
    private final MongoCollection<BsonDocument> reads;
    private final CollectionSchema schema;
    private final Duration grace;
    private final ApplierOptions options;
    private final Counter dropped;
    private final Counter folded;

    private TombstoneCompactor(MongoCollection<BsonDocument> collection, CollectionSchema schema, Duration grace,
                               ApplierOptions options) {
        if (collection == null || schema == null || options == null) {
            throw new InvalidConfigurationException("compactor: collection, schema and options are all required");
        }
        if (grace == null || grace.isNegative() || grace.isZero()) {
            throw new InvalidConfigurationException("compactor: grace must be a positive duration at least as long as"
                    + " the oldest delivery (TTL + retries + dead-letter replay), was " + grace);
        }
        this.collection = collection;
        this.reads = collection.withReadPreference(ReadPreference.primary()).withReadConcern(ReadConcern.LOCAL);
        this.schema = schema;
        this.grace = grace;
        this.options = options;
        this.dropped = Counter.builder("orderless.compaction.tombstones.dropped")
                .tag("collection", collection.getNamespace().getCollectionName())
                .register(options.meters());
        this.folded = Counter.builder("orderless.compaction.increments.folded")
                .description("increments of counters folded into their values by compaction")
                .tag("collection", collection.getNamespace().getCollectionName())
                .register(options.meters());
    }

    /**
     * A compactor of {@code collection}; it compacts nothing until asked.
     *
     * @param collection the live collection, written by a {@link GuardedApplier} with {@code schema}
     * @param schema     which fields are sets (tombstones) and counters (increments)
     * @param grace      how old a tombstone or an increment must be to go: longer than any delivery can be late
     * @param options    the clock the grace is measured by, the attempts per document, and the meters
     * @return the compactor
     * @throws InvalidConfigurationException if an argument is null or {@code grace} is not a positive duration
     */
    public static TombstoneCompactor create(MongoCollection<BsonDocument> collection, CollectionSchema schema,
                                            Duration grace, ApplierOptions options) {
        return new TombstoneCompactor(collection, schema, grace, options);
    }

    /**
     * What one compaction pass did: documents written, tombstones dropped, increments folded into their values.
     *
     * @param documents         documents written
     * @param tombstonesDropped tombstones dropped from them
     * @param incrementsFolded  counters' increments folded into their values
     */
    public record Compaction(long documents, long tombstonesDropped, long incrementsFolded) {
        /**
         * A pass over sets only: no increments folded.
         *
         * @param documents         documents written
         * @param tombstonesDropped tombstones dropped from them
         */
        public Compaction(long documents, long tombstonesDropped) {
            this(documents, tombstonesDropped, 0);
        }

        Compaction plus(Compaction other) {
            return new Compaction(documents + other.documents, tombstonesDropped + other.tombstonesDropped,
                    incrementsFolded + other.incrementsFolded);
        }
    }

    /**
     * Compacts every document holding a tombstone or an increment older than the grace period. A document that
     * cannot be compacted is skipped with a WARN.
     *
     * @return what the pass did
     * @throws TransientException if MongoDB is down; what was compacted stays, and compacting again is safe
     */
    public Compaction compactAll() {
        return compactAll(() -> true);
    }

    /**
     * {@link #compactAll()}, asking {@code goOn} before each document (a scheduler keeps its lease alive
     * there, and stops the pass when it returns false); a stopped pass returns what it did so far.
     *
     * @param goOn asked before each document; false ends the pass
     * @return what the pass did, up to where it stopped
     * @throws TransientException if MongoDB is down; what was compacted stays, and compacting again is safe
     */
    public Compaction compactAll(java.util.function.BooleanSupplier goOn) {
        long cutoff = cutoff().toEpochMilli();
        List<Bson> anyOld = new ArrayList<>();
        schema.sets().forEach(set -> anyOld.add(Queries.tombstonesBefore(set, cutoff)));
        schema.counters().forEach(counter -> anyOld.add(Queries.incrementsBefore(counter, cutoff)));
        Compaction total = new Compaction(0, 0);
        if (anyOld.isEmpty()) {
            return total;   // registers only: nothing to compact
        }
        List<String> ids = new ArrayList<>();
        try {
            reads.find(anyOld.size() == 1 ? anyOld.get(0) : or(anyOld))
                    .projection(include(StoredFields.ID))
                    .forEach(doc -> {
                        BsonValue id = doc.get(StoredFields.ID);
                        if (id != null && id.isString()) {
                            ids.add(id.asString().getValue());   // orderless writes string ids only
                        }
                    });
        } catch (RuntimeException e) {
            throw MongoErrors.translate("compaction scan", e);
        }
        for (String id : ids) {
            if (!goOn.getAsBoolean()) {
                log.info("compaction pass stopped after {} documents", total.documents());
                break;
            }
            try {
                total = total.plus(compact(id));
            } catch (CannotApplyException e) {
                log.warn("compaction skipped '{}': {}", id, e.getMessage());   // one document never stops the pass
            } catch (TransientException e) {
                if (e.backendDown()) {
                    throw e;
                }
                log.warn("compaction skipped '{}' this pass: {}", id, e.getMessage());
            }
        }
        return total;
    }

    /**
     * Compacts one entity's document.
     *
     * @param entity the document's {@code _id}
     * @return one document written and what it dropped and folded, or all zero if there was no document or nothing
     *         old enough
     * @throws CannotApplyException if the document has no int64 {@code _v} (not written by orderless)
     * @throws TransientException if MongoDB failed, or concurrent writes won every attempt; compacting again is safe
     */
    public Compaction compact(String entity) {
        long cutoff = cutoff().toEpochMilli();
        for (int attempt = 1; attempt <= options.maxAttempts(); attempt++) {
            BsonDocument doc;
            try {
                doc = reads.find(eq(StoredFields.ID, entity)).first();
            } catch (RuntimeException e) {
                throw MongoErrors.translate("compact '" + entity + "'", e);
            }
            if (doc == null) {
                return new Compaction(0, 0);
            }
            if (Stored.version(doc) == null || !doc.get(StoredFields.VERSION).isInt64()) {
                throw new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "no progress: '" + entity
                        + "' has no int64 _v, so it was not written by orderless and cannot be compacted");
            }
            long gcFloor = Stored.gcFloor(doc);
            long count = 0;
            List<Bson> updates = new ArrayList<>();
            for (SetField set : schema.sets()) {
                BsonArray kept = new BsonArray();
                for (BsonValue value : Stored.array(doc, set.tombstones())) {
                    if (value.isDocument() && writtenBefore(value.asDocument(), cutoff)) {
                        gcFloor = Math.max(gcFloor, Stored.seqOf(value.asDocument()));
                        count++;
                    } else {
                        kept.add(value);
                    }
                }
                if (kept.size() != Stored.array(doc, set.tombstones()).size()) {
                    updates.add(set(set.tombstones(), kept));
                }
            }
            long folded = 0;
            for (String counter : schema.counters()) {
                folded += foldIncrements(doc, counter, cutoff, updates);
            }
            if (count == 0 && folded == 0) {
                return new Compaction(0, 0);
            }
            if (count > 0) {
                updates.add(set(StoredFields.GC_FLOOR, gcFloor));
            }
            updates.add(inc(StoredFields.VERSION, 1L));
            try {
                if (collection.updateOne(Queries.versionIs(entity, Stored.version(doc)), combine(updates))
                        .getMatchedCount() > 0) {
                    dropped.increment(count);
                    this.folded.increment(folded);
                    log.debug("compacted '{}': dropped {} tombstones, _gcFloor now {}; folded {} increments", entity,
                            count, gcFloor, folded);
                    return new Compaction(1, count, folded);
                }
            } catch (RuntimeException e) {
                throw MongoErrors.translate("compact '" + entity + "'", e);
            }
        }
        throw new TransientException("compaction of '" + entity + "' lost " + options.maxAttempts()
                + " races with concurrent writes; try again later");
    }

    /**
     * Folds counter {@code counter}'s increments recorded before the cutoff, by a seq prefix (steps above): pending
     * ones and runs alike (a run by its newest increment), the rest coalesced into runs ({@link CounterBook}); adds
     * their updates and returns how many increments it folded.
     */
    private static long foldIncrements(BsonDocument doc, String counter, long cutoff, List<Bson> updates) {
        List<CounterBook.Span> spans = CounterBook.of(doc, counter).all();
        long horizon = Stored.incrementFloor(doc, counter);
        int folded = 0;
        long increments = 0;
        while (folded < spans.size() && spans.get(folded).atMillis() < cutoff) {
            CounterBook.Span span = spans.get(folded);
            horizon = Math.max(horizon, span.hi());
            increments += span.hi() - span.lo() + 1;
            folded++;
        }
        if (folded == 0) {
            return 0;
        }
        updates.add(Queries.counterKept(counter, CounterBook.coalesced(spans.subList(folded, spans.size()))));
        updates.add(unset(Queries.incrementsPath(counter)));
        updates.add(set(Queries.incrementFloorPath(counter), horizon));
        return increments;
    }

    private Instant cutoff() {
        return options.clock().instant().minus(grace);
    }

    /** A tombstone without a timestamp was not written by this version: old enough by definition. */
    private static boolean writtenBefore(BsonDocument tombstone, long cutoffMillis) {
        BsonValue at = tombstone.get(StoredFields.ENTRY_AT);
        return at == null || !at.isDateTime() || at.asDateTime().getValue() < cutoffMillis;
    }
}
