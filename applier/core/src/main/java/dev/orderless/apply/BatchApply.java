package dev.orderless.apply;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import dev.orderless.CannotApplyException;
import dev.orderless.OrderlessException;
import dev.orderless.TransientException;
import dev.orderless.internal.MongoErrors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One {@link GuardedApplier#applyAll} call. Safe because orderless's writes do not depend on order: each
 * first write is a guarded write that is right or harmless on its own, whatever the others in the batch
 * (even of the same entity) do.
 *
 * <ol>
 *   <li>Validate and plan every op; a refusal is that op's result. An op the caller hinted as present
 *       starts with its plan's {@link WritePlan#firstIfPresent()} (a set element's in-place refresh).
 *   <li>Send every first write in one unordered {@code bulkWrite}. An upsert either matched (applied),
 *       inserted (applied, listed with its index in the result), or failed with its own write error
 *       (listed with its index): a duplicate {@code _id} there means "did not match", exactly as for one
 *       {@code updateOne}. A plain update (a hinted refresh) is not listed when it matches nothing, so
 *       those are settled together from the result's matched count: the matches of the upserts are known,
 *       the rest are the plain updates'. All matched: all applied. Otherwise each is decided from a read;
 *       if some did match, one found holding its very entry is reported applied, since this write may have
 *       put it there (the state is the same either way).
 *   <li>Read, in one {@code find} with {@code $in}, the documents of every op the bulk write did not
 *       settle and of every op that reads first (a delete), and run {@code apply}'s decide-and-write loop
 *       for each as its document arrives.
 *   <li>An op whose write failed with any other error is applied on its own, which classifies the error
 *       as {@code apply} does. So is every op of a bulk write that failed as a whole in a way one op can
 *       cause (too large for the driver, a connection dropped, a timeout), until one shows MongoDB down.
 *       A failure that shows MongoDB down, or a write concern error, is every op's failure: none of them
 *       is known to be applied, and applying again is safe.
 * </ol>
 */
final class BatchApply {
    private final GuardedApplier applier;

    BatchApply(GuardedApplier applier) {
        this.applier = applier;
    }

    List<BatchResult> apply(List<Operation> ops, Predicate<Operation> likelyPresent) {
        BatchResult[] results = new BatchResult[ops.size()];
        Map<Integer, WritePlan> plans = new HashMap<>();
        Map<Integer, WritePlan.Write> firsts = new LinkedHashMap<>();   // op index -> its first write, in the bulk
        Set<Integer> toRead = new LinkedHashSet<>();  // op indexes that continue from a read
        Set<Integer> alone = new LinkedHashSet<>();   // op indexes applied on their own
        for (int i = 0; i < ops.size(); i++) {
            Operation op = ops.get(i);
            try {
                WritePlan plan = applier.plan(op);
                plans.put(i, plan);
                Optional<WritePlan.Write> first = likelyPresent.test(op) ? plan.firstIfPresent() : plan.first();
                if (first.isPresent()) {
                    firsts.put(i, first.get());
                } else {
                    toRead.add(i);
                }
            } catch (CannotApplyException e) {
                applier.refused(e);
                results[i] = new BatchResult.Refused(op, e);
            }
        }
        Set<Integer> maybeApplied = writeFirst(ops, firsts, results, toRead, alone);
        continueFromRead(ops, plans, toRead, maybeApplied, results);
        Optional<OrderlessException> down = Optional.empty();
        for (int i : alone) {
            // once MongoDB shows itself down, the rest would only wait for it one by one
            results[i] = down.isPresent() ? new BatchResult.Failed(ops.get(i), down.get()) : alone(ops.get(i));
            if (results[i] instanceof BatchResult.Failed failed && failed.error() instanceof TransientException t
                    && t.backendDown()) {
                down = Optional.of(t);
            }
        }
        return List.of(results);
    }

    /** Sends the first writes; returns the indexes of plain updates that may have matched and are read anyway. */
    private Set<Integer> writeFirst(List<Operation> ops, Map<Integer, WritePlan.Write> firsts, BatchResult[] results,
                                    Set<Integer> toRead, Set<Integer> alone) {
        if (firsts.isEmpty()) {
            return Set.of();
        }
        List<Integer> bulk = new ArrayList<>(firsts.keySet());
        List<WriteModel<BsonDocument>> models = new ArrayList<>();
        for (WritePlan.Write write : firsts.values()) {
            models.add(new UpdateOneModel<>(write.filter(), write.update(), new UpdateOptions().upsert(write.upsert())));
        }
        String what = applier.describe(ops.get(bulk.get(0))) + " and the rest of its batch";
        BulkWriteResult result;
        Map<Integer, BulkWriteError> errors = new HashMap<>();
        try {
            result = applier.collection().bulkWrite(models, new BulkWriteOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            if (e.getWriteConcernError() != null) {
                failAll(ops, bulk, results, what, e);
                return Set.of();
            }
            result = e.getWriteResult();
            e.getWriteErrors().forEach(error -> errors.put(error.getIndex(), error));
        } catch (RuntimeException e) {
            OrderlessException error = MongoErrors.translate(what, e);
            if (error instanceof CannotApplyException || error instanceof TransientException t && !t.backendDown()) {
                // possibly one op's doing (too large for the driver, a connection its write drops): each on its
                // own tells whose, and the others are not held up by it
                alone.addAll(bulk);
            } else {
                failAll(ops, bulk, results, what, e);
            }
            return Set.of();
        }
        Set<Integer> inserted = new HashSet<>();
        result.getUpserts().forEach(upsert -> inserted.add(upsert.getIndex()));
        int upsertsMatched = 0;
        List<Integer> plain = new ArrayList<>();   // op indexes of plain updates that raised no error
        for (int k = 0; k < bulk.size(); k++) {
            int i = bulk.get(k);
            boolean upsert = firsts.get(i).upsert();
            BulkWriteError error = errors.get(k);
            if (error != null) {
                if (upsert && MongoErrors.isDuplicateIdKey(error)) {
                    toRead.add(i);                                 // did not match: decide from the document
                } else {
                    alone.add(i);                                  // its own error: classified as apply does
                }
            } else if (upsert) {
                results[i] = done(ops.get(i), Outcome.APPLIED);   // matched, or inserted
                upsertsMatched += inserted.contains(k) ? 0 : 1;
            } else {
                plain.add(i);
            }
        }
        int plainMatched = result.getMatchedCount() - upsertsMatched;
        if (plainMatched >= plain.size()) {
            plain.forEach(i -> results[i] = done(ops.get(i), Outcome.APPLIED));
            return Set.of();
        }
        toRead.addAll(plain);
        return plainMatched > 0 ? new HashSet<>(plain) : Set.of();
    }

    /**
     * Reads the documents of {@code toRead} with one {@code $in} and decides each op as its document
     * arrives, so at most one cursor batch is held at a time, never every document of the batch.
     */
    private void continueFromRead(List<Operation> ops, Map<Integer, WritePlan> plans, Set<Integer> toRead,
                                  Set<Integer> maybeApplied, BatchResult[] results) {
        if (toRead.isEmpty()) {
            return;
        }
        Map<String, List<Integer>> byEntity = new LinkedHashMap<>();
        toRead.forEach(i -> byEntity.computeIfAbsent(ops.get(i).entity(), entity -> new ArrayList<>()).add(i));
        Set<BsonValue> ids = new HashSet<>();
        byEntity.keySet().forEach(entity -> ids.add(new BsonString(entity)));
        try (MongoCursor<BsonDocument> documents = applier.reads().find(in(StoredFields.ID, ids)).iterator()) {
            while (documents.hasNext()) {
                BsonDocument doc = documents.next();
                List<Integer> mine = byEntity.remove(doc.getString(StoredFields.ID).getValue());
                if (mine != null) {
                    decide(ops, plans, mine, Optional.of(doc), maybeApplied, results);
                }
            }
        } catch (RuntimeException e) {
            List<Integer> undecided = new ArrayList<>();
            byEntity.values().forEach(undecided::addAll);
            if (!undecided.isEmpty()) {
                failAll(ops, undecided, results, "read for " + applier.describe(ops.get(undecided.get(0)))
                        + " and the rest of its batch", e);
            }
            return;
        }
        byEntity.values().forEach(mine -> decide(ops, plans, mine, Optional.empty(), maybeApplied, results));
    }

    /** {@code apply}'s decide-and-write loop for each op in {@code indexes}, from {@code doc} as read. */
    private void decide(List<Operation> ops, Map<Integer, WritePlan> plans, List<Integer> indexes,
                        Optional<BsonDocument> doc, Set<Integer> maybeApplied, BatchResult[] results) {
        for (int i : indexes) {
            Operation op = ops.get(i);
            try {
                Outcome outcome = applier.run(op, plans.get(i), Optional.of(doc));
                results[i] = done(op, outcome == Outcome.DUPLICATE && maybeApplied.contains(i) ? Outcome.APPLIED : outcome);
            } catch (CannotApplyException e) {
                applier.refused(e);
                results[i] = new BatchResult.Refused(op, e);
            } catch (OrderlessException e) {
                results[i] = new BatchResult.Failed(op, e);
            }
        }
    }

    private BatchResult alone(Operation op) {
        try {
            return new BatchResult.Done(op, applier.apply(op));
        } catch (CannotApplyException e) {
            return new BatchResult.Refused(op, e);   // apply counted it
        } catch (OrderlessException e) {
            return new BatchResult.Failed(op, e);
        }
    }

    private BatchResult done(Operation op, Outcome outcome) {
        return new BatchResult.Done(op, applier.counted(op, outcome));
    }

    private static void failAll(List<Operation> ops, List<Integer> indexes, BatchResult[] results, String what,
                                RuntimeException e) {
        OrderlessException error = MongoErrors.translate(what, e);
        for (int i : indexes) {
            results[i] = error instanceof CannotApplyException refusal
                    ? new BatchResult.Failed(ops.get(i), new TransientException(
                            "batch refused as a whole (" + refusal.getMessage() + "); apply its ops on their own", e))
                    : new BatchResult.Failed(ops.get(i), error);
        }
    }
}
