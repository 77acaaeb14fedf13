package dev.orderless.apply.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.setOnInsert;
import static com.mongodb.client.model.Updates.unset;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import dev.orderless.apply.CounterValues;
import dev.orderless.apply.StoredFields;
import dev.orderless.internal.MongoErrors;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * Writes a counter's bookkeeping back on a document exactly, for a rebuild from the version history: increments folded
 * into one sum up to a seq (a fold: {@code _incFloor}, as compaction leaves it) and runs of consecutive seqs with their
 * sums ({@code _incRuns}), which no operation can stand for. Written as the live document keeps them, so that any of
 * their seqs delivered again there is what it is on the live one (beyond the horizon below a fold, a duplicate in a
 * run), and in one write per counter, whatever the length of a run.
 *
 * <ol>
 *   <li>Read the document (the rebuild applied the entity's other operations first; absent, it is inserted).
 *   <li>A fold the document has not reached: the increments it holds at or below the fold leave (their sum is in the
 *       fold's), the fold's sum is added and {@code _incFloor} raised to it. Each run above the document's floor and
 *       fold: the increments it holds inside the run leave (a consumer delivered them beside the rebuild: their sum is
 *       in the run's), the run's sum is added and the run kept. Where a fold or a run is there already, nothing.
 *   <li>Refused, naming why, where the document holds a run crossing a fold's seq or a run's ends: its increments
 *       could not be told apart.
 *   <li>Written under a compare-and-set on {@code _v}; a lost one reads again, up to {@code maxAttempts} times.
 * </ol>
 */
public final class CounterRestore {
    private final MongoCollection<BsonDocument> collection;
    private final int maxAttempts;

    private CounterRestore(MongoCollection<BsonDocument> collection, int maxAttempts) {
        this.collection = collection;
        this.maxAttempts = maxAttempts;
    }

    /**
     * @param collection  the collection a guarded applier writes
     * @param maxAttempts compare-and-sets lost to concurrent writes before it gives up
     * @return a restore writing there
     */
    public static CounterRestore on(MongoCollection<BsonDocument> collection, int maxAttempts) {
        return new CounterRestore(collection, maxAttempts);
    }

    /**
     * Writes {@code field}'s fold and runs on {@code entity}'s document.
     *
     * @param entity  the document's {@code _id}
     * @param field   the counter
     * @param upTo    the fold's seq; 0 for none
     * @param folded  the fold's sum
     * @param runs    lowest seq to {@code {highest seq, sum}} of each run
     * @param now     what the runs' time reads (their increments count from now for compaction's grace)
     * @return empty once the document holds them (written now, or already: a rebuild repeated or resumed), or why it
     *         cannot
     * @throws dev.orderless.OrderlessException as MongoDB's failures translate, or if concurrent writes won every
     *                                          attempt
     */
    public Optional<String> restore(String entity, String field, long upTo, BigInteger folded,
                                    SortedMap<Long, Map.Entry<Long, BigInteger>> runs, Instant now) {
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            BsonDocument doc;
            try {
                doc = collection.find(eq(StoredFields.ID, entity)).first();
            } catch (RuntimeException e) {
                throw MongoErrors.translate("restore counter '" + field + "' of '" + entity + "'", e);
            }
            BsonDocument current = doc == null ? new BsonDocument() : doc;
            long floor = number(current.get(StoredFields.FLOOR));
            BsonValue floors = current.get(StoredFields.INCREMENT_FLOOR);
            long incFloor = floors != null && floors.isDocument() ? number(floors.asDocument().get(field)) : 0;
            List<CounterBook.Span> spans = new ArrayList<>(CounterBook.of(current, field).all());
            BigInteger value = CounterValues.read(current.get(field)).orElse(BigInteger.ZERO);
            boolean changed = false;
            long newIncFloor = incFloor;
            if (upTo > incFloor && upTo > floor) {
                for (CounterBook.Span span : List.copyOf(spans)) {
                    if (span.lo() <= upTo && span.hi() > upTo) {
                        return Optional.of("'" + entity + "' counter '" + field + "': a run of seqs " + span.lo() + " to "
                                + span.hi() + " on the target crosses the fold at seq " + upTo);
                    }
                    if (span.hi() <= upTo) {
                        spans.remove(span);
                        value = value.subtract(span.sum());
                    }
                }
                value = value.add(folded);
                newIncFloor = upTo;
                changed = true;
            }
            for (Map.Entry<Long, Map.Entry<Long, BigInteger>> run : runs.entrySet()) {
                long lo = run.getKey();
                long hi = run.getValue().getKey();
                if (hi <= Math.max(floor, newIncFloor)) {
                    continue;   // deleted, or folded, on the target since
                }
                if (spans.stream().anyMatch(span -> span.lo() <= lo && span.hi() >= hi)) {
                    continue;   // every seq of it counted there already (coalesced with its neighbours, maybe)
                }
                for (CounterBook.Span span : List.copyOf(spans)) {
                    if (span.hi() < lo || span.lo() > hi) {
                        continue;
                    }
                    if (span.lo() < lo || span.hi() > hi) {
                        return Optional.of("'" + entity + "' counter '" + field + "': a run of seqs " + span.lo() + " to "
                                + span.hi() + " on the target crosses the run " + lo + " to " + hi);
                    }
                    spans.remove(span);
                    value = value.subtract(span.sum());
                }
                spans.add(new CounterBook.Span(lo, hi, run.getValue().getValue(), now.toEpochMilli()));
                value = value.add(run.getValue().getValue());
                changed = true;
            }
            if (!changed) {
                return Optional.empty();
            }
            List<Bson> updates = new ArrayList<>();
            updates.add(set(field, CounterValues.stored(value)));
            org.bson.BsonArray kept = CounterBook.coalesced(spans);
            updates.add(kept.isEmpty() ? unset(StoredFields.INCREMENT_RUNS + "." + field)
                    : set(StoredFields.INCREMENT_RUNS + "." + field, kept));
            updates.add(unset(StoredFields.INCREMENTS + "." + field));
            if (newIncFloor != incFloor) {
                updates.add(set(StoredFields.INCREMENT_FLOOR + "." + field, newIncFloor));
            }
            updates.add(inc(StoredFields.VERSION, 1L));
            if (doc == null) {
                updates.add(setOnInsert(StoredFields.FLOOR, 0L));
                updates.add(setOnInsert(StoredFields.GC_FLOOR, 0L));
            }
            BsonValue version = current.get(StoredFields.VERSION);
            Bson guard = and(eq(StoredFields.ID, entity), version == null ? exists(StoredFields.VERSION, false)
                    : eq(StoredFields.VERSION, version));
            try {
                if (collection.updateOne(guard, combine(updates), new UpdateOptions().upsert(doc == null))
                        .getMatchedCount() + (doc == null ? 1 : 0) > 0) {
                    return Optional.empty();
                }
            } catch (com.mongodb.MongoException e) {
                if (!(doc == null && MongoErrors.isDuplicateKey(e))) {   // a concurrent first write: read again
                    throw MongoErrors.translate("restore counter '" + field + "' of '" + entity + "'", e);
                }
            } catch (RuntimeException e) {
                throw MongoErrors.translate("restore counter '" + field + "' of '" + entity + "'", e);
            }
        }
        throw new dev.orderless.TransientException("restore of counter '" + field + "' of '" + entity + "' lost "
                + maxAttempts + " races with concurrent writes; rebuild it again");
    }

    private static long number(BsonValue value) {
        return value != null && value.isNumber() ? value.asNumber().longValue() : 0L;
    }
}
