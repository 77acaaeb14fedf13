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
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One {@link GuardedApplier#applyAll} call: the ops of a batch settled in rounds, each round at most one read
 * and one bulk write, however many ops of one entity the batch holds. Safe because every write is guarded on
 * its own: a write is right or harmless whatever the others in its bulk write (even of the same entity) do.
 *
 * <ol>
 *   <li>Validate and plan every op; a refusal is that op's result. An op the caller hinted as present
 *       starts with its plan's {@link WritePlan#firstIfPresent()} (a set element's in-place refresh).
 *   <li>Round one, blind: every op's first write, chosen by {@link WriterChoice} (one write per slot, the
 *       highest seq; a lower seq of the same slot follows it), in one unordered {@code bulkWrite}. An upsert
 *       either matched (applied), inserted (applied, listed with its index in the result), or failed with its
 *       own write error (listed with its index): a duplicate {@code _id} there means "did not match",
 *       exactly as for one {@code updateOne}. A plain update (a hinted refresh) is not listed when it matches
 *       nothing, so those are settled together from the result's matched count: the matches of the upserts
 *       are known, the rest are the plain updates'. All matched: all applied. Otherwise each is decided from
 *       a read; one found holding its very entry is reported applied, since this write may have put it there
 *       (the state is the same either way). A follower of a write known to have matched is superseded.
 *   <li>Every later round: read, in one {@code find} with {@code $in}, the documents of every op not yet
 *       settled (a write that did not match, a delete, which reads first, an op that waited), and decide
 *       each from its document with its plan, as {@code apply} does after a read: an outcome, or the next
 *       write. The writes chosen go in one unordered bulk write, settled as in round one. A write chosen
 *       from a document that then fails against that same document, re-read unchanged, is no progress
 *       ({@code apply}'s rule); a write that matched nothing {@link ApplierOptions#maxAttempts()} times
 *       gives up. Every failed write means its document changed, which is some other op's success, so the
 *       rounds end.
 *   <li>An op whose write failed with any other error is applied on its own, which classifies the error
 *       as {@code apply} does. So is every op of a bulk write that failed as a whole in a way one op can
 *       cause (too large for the driver, a connection dropped, a timeout), until one shows MongoDB down.
 *       A failure that shows MongoDB down, or a write concern error, is the failure of every op not yet
 *       settled: none of them is known to be applied, and applying again is safe.
 * </ol>
 */
final class BatchApply {
    private final GuardedApplier applier;
    private final WriteLoop loop;
    private final List<Operation> ops;
    private final BatchResult[] results;
    private final Map<Integer, WritePlan> plans = new HashMap<>();
    /** Ops whose last write was a plain update that may have matched: a read finding their entry means applied. */
    private final Set<Integer> maybeApplied = new HashSet<>();
    /** Ops applied on their own after the rounds. */
    private final Set<Integer> alone = new LinkedHashSet<>();
    /** Writes of each op that matched nothing. */
    private final Map<Integer, Integer> failedWrites = new HashMap<>();
    /** The document (null: absent) each op's pending write was chosen from; no entry for a blind write. */
    private final Map<Integer, BsonDocument> chosenFrom = new HashMap<>();
    /** The last write sent for each op, named when it makes no progress. */
    private final Map<Integer, WritePlan.Write> lastWrite = new HashMap<>();

    BatchApply(GuardedApplier applier, List<Operation> ops) {
        this.applier = applier;
        this.loop = applier.loop();
        this.ops = ops;
        this.results = new BatchResult[ops.size()];
    }

    List<BatchResult> apply(Predicate<Operation> likelyPresent) {
        Map<Integer, WritePlan.Write> firsts = new LinkedHashMap<>();
        Set<Integer> pending = new LinkedHashSet<>();   // ops that continue from a read
        for (int i = 0; i < ops.size(); i++) {
            Operation op = ops.get(i);
            try {
                WritePlan plan = applier.plan(op);
                plans.put(i, plan);
                Optional<WritePlan.Write> first = likelyPresent.test(op) ? plan.firstIfPresent() : plan.first();
                if (first.isPresent()) {
                    firsts.put(i, first.get());
                } else {
                    pending.add(i);
                }
            } catch (CannotApplyException e) {
                refuse(i, e);
            }
        }
        pending.addAll(write(firsts));
        while (!pending.isEmpty()) {
            pending = nextRound(pending);
        }
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

    /** Reads the documents of {@code pending}, decides each op from its own, writes what was decided. */
    private Set<Integer> nextRound(Set<Integer> pending) {
        Map<String, List<Integer>> byEntity = new LinkedHashMap<>();
        pending.forEach(i -> byEntity.computeIfAbsent(ops.get(i).entity(), entity -> new ArrayList<>()).add(i));
        Set<BsonValue> ids = new HashSet<>();
        byEntity.keySet().forEach(entity -> ids.add(new BsonString(entity)));
        Map<Integer, WritePlan.Write> writes = new LinkedHashMap<>();
        // decided as each document arrives: no more than one cursor batch of documents is held beyond those
        // a write was chosen from
        try (MongoCursor<BsonDocument> documents = applier.reads().find(in(StoredFields.ID, ids)).iterator()) {
            while (documents.hasNext()) {
                BsonDocument doc = documents.next();
                List<Integer> mine = byEntity.remove(doc.getString(StoredFields.ID).getValue());
                if (mine != null) {
                    mine.forEach(i -> decide(i, doc, writes));
                }
            }
        } catch (RuntimeException e) {
            List<Integer> undecided = new ArrayList<>();
            byEntity.values().forEach(undecided::addAll);
            undecided.addAll(writes.keySet());
            if (!undecided.isEmpty()) {
                failAll(undecided, "read for " + applier.describe(ops.get(undecided.get(0)))
                        + " and the rest of its batch", e);
            }
            return Set.of();
        }
        byEntity.values().forEach(mine -> mine.forEach(i -> decide(i, null, writes)));
        return write(writes);
    }

    /** {@code apply}'s decision after a read, for op {@code i}: its outcome, or the write it goes on with. */
    private void decide(int i, BsonDocument doc, Map<Integer, WritePlan.Write> writes) {
        Operation op = ops.get(i);
        try {
            if (chosenFrom.containsKey(i) && Objects.equals(chosenFrom.get(i), doc)) {
                throw loop.noProgress(op, lastWrite.get(i), doc);
            }
            chosenFrom.remove(i);
            WritePlan.Step step = loop.decide(op, plans.get(i), doc);
            if (step instanceof WritePlan.Step.Done done) {
                boolean mine = done.outcome() == Outcome.DUPLICATE && maybeApplied.contains(i);
                results[i] = done(op, mine ? Outcome.APPLIED : done.outcome());
            } else {
                writes.put(i, ((WritePlan.Step.Next) step).write());
                chosenFrom.put(i, doc);
                maybeApplied.remove(i);   // the document shows this op's earlier write did not match
            }
        } catch (CannotApplyException e) {
            refuse(i, e);
        }
    }

    /**
     * Sends the writes {@link WriterChoice} picks from {@code candidates} as one unordered bulk write and
     * settles what it can; returns the ops that go on to the next round.
     */
    private Set<Integer> write(Map<Integer, WritePlan.Write> candidates) {
        Set<Integer> next = new LinkedHashSet<>();
        if (candidates.isEmpty()) {
            return next;
        }
        Map<Integer, Operation> candidateOps = new LinkedHashMap<>();
        candidates.keySet().forEach(i -> candidateOps.put(i, ops.get(i)));
        WriterChoice.Choice choice = WriterChoice.choose(candidateOps);
        next.addAll(choice.waiting());
        choice.waiting().forEach(chosenFrom::remove);   // not written: no progress to judge
        List<Integer> writers = choice.writers();
        List<WriteModel<BsonDocument>> models = new ArrayList<>();
        for (int i : writers) {
            WritePlan.Write write = candidates.get(i);
            lastWrite.put(i, write);
            models.add(new UpdateOneModel<>(write.filter(), write.update(), new UpdateOptions().upsert(write.upsert())));
        }
        List<Integer> unsettled = new ArrayList<>(writers);   // every candidate, until settled
        writers.forEach(w -> unsettled.addAll(choice.followersOf(w)));
        unsettled.addAll(choice.waiting());
        choice.followers().values().forEach(f -> f.forEach(chosenFrom::remove));
        String what = applier.describe(ops.get(writers.get(0))) + " and the rest of its batch";
        BulkWriteResult result;
        Map<Integer, BulkWriteError> errors = new HashMap<>();
        try {
            result = applier.collection().bulkWrite(models, new BulkWriteOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            if (e.getWriteConcernError() != null) {
                failAll(unsettled, what, e);
                return Set.of();
            }
            result = e.getWriteResult();
            e.getWriteErrors().forEach(error -> errors.put(error.getIndex(), error));
        } catch (RuntimeException e) {
            OrderlessException error = MongoErrors.translate(what, e);
            if (error instanceof CannotApplyException || error instanceof TransientException t && !t.backendDown()) {
                // possibly one op's doing (too large for the driver, a connection its write drops): each on its
                // own tells whose, and the others are not held up by it
                alone.addAll(unsettled);
                unsettled.forEach(chosenFrom::remove);
            } else {
                failAll(unsettled, what, e);
            }
            return Set.of();
        }
        Set<Integer> inserted = new HashSet<>();
        result.getUpserts().forEach(upsert -> inserted.add(upsert.getIndex()));
        int upsertsMatched = 0;
        List<Integer> plain = new ArrayList<>();   // writers whose plain update raised no error
        for (int k = 0; k < writers.size(); k++) {
            int i = writers.get(k);
            boolean upsert = candidates.get(i).upsert();
            BulkWriteError error = errors.get(k);
            if (error != null) {
                next.addAll(choice.followersOf(i));
                if (upsert && MongoErrors.isDuplicateIdKey(error)) {
                    matchedNothing(i, next);                        // did not match: decide from the document
                } else {
                    alone.add(i);                                  // its own error: classified as apply does
                    chosenFrom.remove(i);
                }
            } else if (upsert) {
                applied(i, choice);                                // matched, or inserted
                upsertsMatched += inserted.contains(k) ? 0 : 1;
            } else {
                plain.add(i);
            }
        }
        int plainMatched = result.getMatchedCount() - upsertsMatched;
        if (plainMatched >= plain.size()) {
            plain.forEach(i -> applied(i, choice));
        } else {
            for (int i : plain) {
                if (plainMatched > 0) {
                    maybeApplied.add(i);
                }
                next.addAll(choice.followersOf(i));
                matchedNothing(i, next);
            }
        }
        return next;
    }

    /** Op {@code i}'s write is known to have matched: it is applied, and whatever followed it is superseded. */
    private void applied(int i, WriterChoice.Choice choice) {
        results[i] = done(ops.get(i), Outcome.APPLIED);
        chosenFrom.remove(i);
        choice.followersOf(i).forEach(f -> results[f] = done(ops.get(f), Outcome.SUPERSEDED));
    }

    /** Op {@code i}'s write matched nothing (or may not have): a read decides, unless it has tried enough. */
    private void matchedNothing(int i, Set<Integer> next) {
        loop.retried();
        int failed = failedWrites.merge(i, 1, Integer::sum);
        if (failed >= loop.maxAttempts()) {
            results[i] = new BatchResult.Failed(ops.get(i), loop.gaveUp(ops.get(i), failed));
            chosenFrom.remove(i);
        } else {
            next.add(i);
        }
    }

    private void refuse(int i, CannotApplyException e) {
        applier.refused(e);
        results[i] = new BatchResult.Refused(ops.get(i), e);
        chosenFrom.remove(i);
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

    private void failAll(List<Integer> indexes, String what, RuntimeException e) {
        OrderlessException error = MongoErrors.translate(what, e);
        for (int i : indexes) {
            chosenFrom.remove(i);
            results[i] = error instanceof CannotApplyException refusal
                    ? new BatchResult.Failed(ops.get(i), new TransientException(
                            "batch refused as a whole (" + refusal.getMessage() + "); apply its ops on their own", e))
                    : new BatchResult.Failed(ops.get(i), error);
        }
    }
}
