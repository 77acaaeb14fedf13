package dev.orderless.history;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Indexes.ascending;
import static com.mongodb.client.model.Projections.include;
import static com.mongodb.client.model.Sorts.orderBy;
import static dev.orderless.history.HistoryFields.AT;
import static dev.orderless.history.HistoryFields.FOLDED;
import static dev.orderless.history.HistoryFields.ID;
import static dev.orderless.history.HistoryFields.ID_ENTITY;
import static dev.orderless.history.HistoryFields.ID_SEQ;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.internal.MongoErrors;
import dev.orderless.oracle.ReferenceModel;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One retention pass: records older than a cutoff are folded into their entity's state and dropped, so that
 * the history keeps every version after a horizon and one state at it.
 *
 * <p>Per entity with a record from before the cutoff:
 * <ol>
 *   <li>Read its folded state and records. The new horizon is the highest seq up to which every record was
 *       recorded before the cutoff: a later record with a lower seq (a late delivery) keeps everything from
 *       its seq on, so the horizon never passes an operation that is still young.
 *   <li>Fold the records between the old horizon and the new one into the state and write it, guarded by the
 *       whole folded record as read (inserted if there was none): two passes at once, or a pass and the baseline,
 *       fold each entity once, and the loser leaves it to the winner.
 *   <li>Drop the folded records. A crash before this leaves them, and reads skip them (they are at or below the
 *       horizon, which the state covers); the next pass drops them.
 * </ol>
 * Safe only while no operation older than the retention period can still be delivered, as with compaction's
 * grace: one that arrives below its entity's horizon is recorded, counted as late and logged, every read of
 * that entity then says it cannot tell (a wrong state is never returned), and the entity is folded no further
 * (its later records stay versions of their own).
 */
final class Folding {
    private static final Logger log = LoggerFactory.getLogger(Folding.class);

    private final History history;
    private final MongoCollection<BsonDocument> records;

    Folding(History history) {
        this.history = history;
        this.records = history.collection();
    }

    RetentionPass pass(Instant cutoff, BooleanSupplier keepGoing) {
        history.ensureIndexed();
        try {
            records.createIndex(ascending(AT));
        } catch (RuntimeException e) {
            throw MongoErrors.translate("create the index {at} of " + history.name(), e);
        }
        long done = 0;
        long folded = 0;
        long late = 0;
        String previous = null;
        // the entities with old records, one at a time as the sorted scan reaches them: no list of them all
        try (MongoCursor<BsonDocument> old = history.reads().find(and(lt(AT, new BsonDateTime(cutoff.toEpochMilli())),
                gt(ID_SEQ, FOLDED))).projection(include(ID)).sort(orderBy(ascending(ID_ENTITY, ID_SEQ))).iterator()) {
            while (old.hasNext()) {
                String entity = Records.entityOf(old.next());
                if (entity.equals(previous)) {
                    continue;
                }
                previous = entity;
                if (!keepGoing.getAsBoolean()) {
                    return finish(done, folded, late, false);
                }
                // the live document first: it shows nothing whose record the load misses
                Optional<BsonDocument> document = history.liveDocument(entity);
                Loaded loaded = history.load(entity);
                late += loaded.late().size();
                long drop = fold(loaded, cutoff, document);
                if (drop > 0) {
                    done++;
                    folded += drop;
                }
            }
        } catch (MongoException e) {
            throw MongoErrors.translate("find the old records of " + history.name(), e);
        }
        return finish(done, folded, late, true);
    }

    /**
     * Folds what {@code loaded} recorded before {@code cutoff}; returns how many records it dropped. An entity with
     * late records is not folded further: a record is told late from folded by the cutoff of the fold it
     * followed, and a new fold would move that cutoff past it (it stays late, and its reads unknowable). A state
     * the baseline took keeps its mark, so that every record at or below its horizon keeps being merged (none is
     * ever late); the records merged into it are dropped with the fold, and those it cannot judge are kept.
     */
    private long fold(Loaded loaded, Instant cutoff, Optional<BsonDocument> document) {
        long liveGcFloor = document.map(LiveDocument::gcFloor).orElse(0L);
        if (!loaded.late().isEmpty()) {
            log.warn("{} '{}': {} record(s) below its retention horizon {} arrived after it was folded; reads of it say"
                    + " they cannot tell, and it is folded no further. The retention period is shorter than this"
                    + " delivery", history.name(), loaded.entity(), loaded.late().size(), loaded.horizon());
            List<BsonValue> leftover = new ArrayList<>();
            loaded.leftover().forEach(record -> leftover.add(record.get(ID)));
            return leftover.isEmpty() ? 0 : drop(loaded, leftover);
        }
        long horizon = loaded.horizon();
        List<Operation> ops = new ArrayList<>();
        List<BsonValue> ids = new ArrayList<>();
        loaded.leftover().forEach(record -> ids.add(record.get(ID)));   // folded by a pass that stopped short
        for (BsonDocument record : loaded.above()) {
            if (!Records.atOf(record).isBefore(cutoff)) {
                break;   // a young record: the horizon stays below it
            }
            ops.add(Records.operationOf(record));
            ids.add(record.get(ID));
            horizon = Records.seqOf(record);
        }
        if (ops.isEmpty() && loaded.merged().isEmpty()) {
            return ids.isEmpty() ? 0 : drop(loaded, ids);
        }
        loaded.merged().forEach(record -> ids.add(record.get(ID)));   // in loaded.folded(): written with it
        EntityState state = history.model().continueFrom(loaded.folded(), ops);
        Ledger ledger = loaded.ledger().after(ops, history.schema()).foldedUpTo(cuts(horizon, document),
                history.live().isPresent());
        BsonDocument foldedRecord = Records.withGcFloor(Records.keepingBaseline(Records.folded(state, ledger, horizon,
                cutoff, history.options().clock().instant()), loaded.baseline()), gcFloor(loaded, state, liveGcFloor));
        try {
            if (loaded.record().isEmpty()) {
                records.insertOne(foldedRecord);
            } else if (records.replaceOne(Records.unchanged(loaded.record().get()), foldedRecord)
                    .getMatchedCount() == 0) {
                return 0;   // another pass, or the baseline, changed it meanwhile
            }
            return drop(loaded, ids);
        } catch (MongoException e) {
            if (MongoErrors.isDuplicateKey(e)) {
                return 0;   // another pass, or the baseline, inserted its folded state first
            }
            throw MongoErrors.translate("fold the history of '" + loaded.entity() + "' in " + history.name(), e);
        } catch (RuntimeException e) {
            throw MongoErrors.translate("fold the history of '" + loaded.entity() + "' in " + history.name(), e);
        }
    }

    /**
     * The live compaction floor the new folded state accounts for: {@code liveGcFloor} if a record has its seq, or the
     * old folded state or the new one accounts for it; else the one the old folded state accounted for. Once the
     * record of a dropped tombstone is folded, and the element added again, nothing else would show that seq.
     */
    private static long gcFloor(Loaded loaded, EntityState state, long liveGcFloor) {
        boolean accounted = liveGcFloor > 0 && (loaded.recordedSeqs().contains(liveGcFloor)
                || loaded.vouchesFor(liveGcFloor, liveGcFloor) || liveGcFloor <= state.floor()
                || ReferenceModel.witnesses(state).contains(liveGcFloor));
        return accounted ? liveGcFloor : loaded.gcFloor();
    }

    /**
     * Per counter, the seq up to which its increments are folded into one sum: where the history knows its live
     * collection, the document's {@code _incFloor} if below the horizon (none if it has no document yet: an
     * operation recorded, not applied), so that the folded state accounts for each seq the document shows
     * ({@link Loaded#vouchesFor}) and folds only what the live applier refuses below; without it, the horizon.
     */
    private Map<String, Long> cuts(long horizon, Optional<BsonDocument> document) {
        Map<String, Long> cuts = new TreeMap<>();
        Map<String, Long> folded = document.map(LiveDocument::incrementFloors).orElse(Map.of());
        for (String counter : history.schema().counters()) {
            cuts.put(counter, history.live().isEmpty() ? horizon
                    : Math.min(horizon, folded.getOrDefault(counter, 0L)));
        }
        return cuts;
    }

    /** Drops exactly the records folded: one recorded meanwhile in the same range is late, and kept. */
    private long drop(Loaded loaded, List<BsonValue> ids) {
        try {
            return records.deleteMany(in(ID, ids)).getDeletedCount();
        } catch (RuntimeException e) {
            throw MongoErrors.translate("drop the folded history of '" + loaded.entity() + "' in " + history.name(), e);
        }
    }

    private RetentionPass finish(long entities, long folded, long late, boolean complete) {
        log.info("{}: retention folded {} records of {} entities{}{}", history.name(), folded, entities,
                late > 0 ? ", " + late + " late records kept" : "", complete ? "" : " (pass ended early)");
        return new RetentionPass(entities, folded, late, complete);
    }
}
