package dev.orderless.apply;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import dev.orderless.CannotApplyException;
import dev.orderless.OrderlessException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One {@link GuardedApplier#applyAll} call. Safe because orderless's writes do not depend on order: each
 * first write is a guarded upsert that is right or harmless on its own, whatever the others in the batch
 * (even of the same entity) do.
 *
 * <ol>
 *   <li>Validate and plan every op; a refusal is that op's result.
 *   <li>Send every first write that is an upsert in one unordered {@code bulkWrite}. An upsert either
 *       matched (applied), inserted (applied, listed with its index in the result), or failed with its
 *       own write error (listed with its index): a duplicate {@code _id} there means "did not match",
 *       exactly as for one {@code updateOne}.
 *   <li>Read, in one {@code find} with {@code $in}, the documents of every op the bulk write did not
 *       settle and of every op that reads first (a delete), then run {@code apply}'s decide-and-write loop
 *       for each from that read.
 *   <li>An op whose write failed with any other error is applied on its own, which classifies the error
 *       as {@code apply} does. A failure of the whole bulk write (MongoDB unreachable, a write concern
 *       error) is every op's failure: none of them is known to be applied, and applying again is safe.
 * </ol>
 */
final class BatchApply {
    private final GuardedApplier applier;

    BatchApply(GuardedApplier applier) {
        this.applier = applier;
    }

    List<BatchResult> apply(List<Operation> ops) {
        BatchResult[] results = new BatchResult[ops.size()];
        Map<Integer, WritePlan> plans = new HashMap<>();
        List<Integer> bulk = new ArrayList<>();      // op indexes whose first write goes in the bulk write
        Set<Integer> toRead = new LinkedHashSet<>();  // op indexes that continue from a read
        Set<Integer> alone = new LinkedHashSet<>();   // op indexes applied on their own
        for (int i = 0; i < ops.size(); i++) {
            try {
                WritePlan plan = applier.plan(ops.get(i));
                plans.put(i, plan);
                if (plan.first().filter(WritePlan.Write::upsert).isPresent()) {
                    bulk.add(i);
                } else {
                    toRead.add(i);
                }
            } catch (CannotApplyException e) {
                applier.refused(e);
                results[i] = new BatchResult.Refused(ops.get(i), e);
            }
        }
        writeFirst(ops, plans, bulk, results, toRead, alone);
        continueFromRead(ops, plans, toRead, results);
        for (int i : alone) {
            results[i] = alone(ops.get(i));
        }
        return List.of(results);
    }

    private void writeFirst(List<Operation> ops, Map<Integer, WritePlan> plans, List<Integer> bulk,
                            BatchResult[] results, Set<Integer> toRead, Set<Integer> alone) {
        if (bulk.isEmpty()) {
            return;
        }
        List<WriteModel<BsonDocument>> models = new ArrayList<>();
        for (int i : bulk) {
            WritePlan.Write write = plans.get(i).first().orElseThrow();
            models.add(new UpdateOneModel<>(write.filter(), write.update(), new UpdateOptions().upsert(true)));
        }
        Map<Integer, BulkWriteError> errors = new HashMap<>();
        try {
            applier.collection().bulkWrite(models, new BulkWriteOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            if (e.getWriteConcernError() != null) {
                failAll(ops, bulk, results, applier.describe(ops.get(bulk.get(0))) + " and the rest of its batch", e);
                return;
            }
            e.getWriteErrors().forEach(error -> errors.put(error.getIndex(), error));
        } catch (RuntimeException e) {
            failAll(ops, bulk, results, applier.describe(ops.get(bulk.get(0))) + " and the rest of its batch", e);
            return;
        }
        for (int k = 0; k < bulk.size(); k++) {
            int i = bulk.get(k);
            BulkWriteError error = errors.get(k);
            if (error == null) {
                results[i] = done(ops.get(i), Outcome.APPLIED);   // matched, or inserted
            } else if (MongoErrors.isDuplicateIdKey(error)) {
                toRead.add(i);                                     // did not match: decide from the document
            } else {
                alone.add(i);                                      // its own error: classified as apply does
            }
        }
    }

    private void continueFromRead(List<Operation> ops, Map<Integer, WritePlan> plans, Set<Integer> toRead,
                                  BatchResult[] results) {
        if (toRead.isEmpty()) {
            return;
        }
        Set<BsonValue> ids = new HashSet<>();
        toRead.forEach(i -> ids.add(new BsonString(ops.get(i).entity())));
        Map<String, BsonDocument> documents = new HashMap<>();
        try {
            applier.reads().find(in(StoredFields.ID, ids))
                    .forEach(doc -> documents.put(doc.getString(StoredFields.ID).getValue(), doc));
        } catch (RuntimeException e) {
            failAll(ops, new ArrayList<>(toRead), results, "read for " + applier.describe(ops.get(toRead.iterator()
                    .next())) + " and the rest of its batch", e);
            return;
        }
        for (int i : toRead) {
            Operation op = ops.get(i);
            try {
                Outcome outcome = applier.run(op, plans.get(i), Optional.of(Optional.ofNullable(documents.get(op.entity()))));
                results[i] = done(op, outcome);
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
                    ? new BatchResult.Failed(ops.get(i), new dev.orderless.TransientException(
                            "batch refused as a whole (" + refusal.getMessage() + "); apply its ops on their own", e))
                    : new BatchResult.Failed(ops.get(i), error);
        }
    }
}
