package dev.orderless.apply;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
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
import org.bson.conversions.Bson;

/**
 * One {@link GuardedApplier#applyAll} call: the ops of a batch settled in rounds, each round one read and one
 * bulk write, however many ops of one entity the batch holds. Safe because every write is guarded on its own:
 * a write is right or harmless whatever the others in its bulk write (even of the same entity) do.
 *
 * <ol>
 *   <li>Validate and plan every op; a refusal is that op's result. An op the caller hinted as present
 *       starts with its plan's {@link WritePlan#firstIfPresent()} (a set element's in-place refresh).
 *   <li>Round one, blind: one unordered {@code bulkWrite} holding, for each writer {@link WriterChoice} picks (one
 *       per slot, the highest seq; a lower seq of the same slot follows it):
 *       <ul>
 *         <li>its {@link WritePlan#blind()} writes: a set element's move and its refresh in place side by side (at
 *             most one of them can match), anything else's first write;
 *         <li>unless the caller hinted it as present, its probe ({@link #probe}): a statement that changes
 *             nothing and matches where the op is {@link WritePlan#supersededWhen() superseded}, a lower seq
 *             another consumer overtook;
 *         <li>each guarded too, for a writer with followers, on the delete floor being none of their seqs.
 *       </ul>
 *       Each statement tells its own outcome: matched, inserted, or its own write error (listed with its
 *       index). An upsert that did not match fails with a duplicate {@code _id}, exactly as one {@code updateOne}
 *       does; a refresh in place, sent as an upsert that also sets another {@code _id} on insert, never inserts
 *       (the position is not found, or the change of {@code _id} is refused), nor does a probe (it sets a field
 *       inside the string {@code _id}). So: a write matched, the op is applied and its followers superseded;
 *       else its probe matched, the op and its followers are superseded; else it is read in round two (a miss
 *       here costs a read, not an attempt).
 *   <li>Every later round: read, in one {@code find} with {@code $in}, the documents of every op not yet
 *       settled (a write that did not match, a delete, which reads first, an op that waited or followed),
 *       and decide each from its document as {@code apply} does after a read: no progress if its last write,
 *       chosen from this very document, matched nothing on it; given up after
 *       {@link ApplierOptions#maxAttempts()} writes chosen from a read that matched nothing; else an outcome
 *       or the next write. The writes go in one unordered bulk write, settled as in round one, except a
 *       compare-and-set on {@code _v} (a delete's, a ranked register's): a plain update, since as an upsert it
 *       would insert what it read where its document was removed meanwhile; a bulk result only counts its
 *       matches, so one goes in the bulk write and each other on its own. A write that missed because another of
 *       the same round changed its document first is no attempt (that was progress). A lower seq that followed
 *       a write that matched is superseded, as in round one. Every write
 *       that misses means its document changed, which is some other op's success, so the rounds end.
 *   <li>An op whose write failed with any other error is applied on its own, which classifies the error
 *       as {@code apply} does. So is every op of a bulk write that failed as a whole in a way one op can
 *       cause (too large for the driver, a connection dropped, a timeout), until one shows MongoDB down.
 *       A failure that shows MongoDB down, or a write concern error, is the failure of every op not yet
 *       settled: none of them is known to be applied, and applying again is safe.
 * </ol>
 */
final class BatchApply {
    /** What a refresh sent as an upsert sets {@code _id} to on insert, so that it never inserts (see {@link #model}). */
    private static final BsonDocument NEVER_INSERTED = new BsonDocument("orderless", new BsonString("never inserted"));
    /**
     * What a probe sets on insert: a field inside the {@code _id} it would insert, a string, which no server can
     * create, so that a probe that matches nothing fails alone and inserts nothing (see {@link #probe}).
     */
    private static final String INSIDE_ID = StoredFields.ID + ".orderless";
    /** MongoDB's ImmutableField: an insert whose {@code _id} an update would change. */
    private static final int IMMUTABLE_FIELD = 66;

    private final GuardedApplier applier;
    private final WriteLoop loop;
    private final List<Operation> ops;
    private final BatchResult[] results;
    private final Map<Integer, WritePlan> plans = new HashMap<>();
    /** Ops applied on their own after the rounds. */
    private final Set<Integer> alone = new LinkedHashSet<>();
    /** Writes of each op that matched nothing. */
    private final Map<Integer, Integer> failedWrites = new HashMap<>();
    /** The document (null: absent) each op's pending write was chosen from; no entry for a blind write. */
    private final Map<Integer, BsonDocument> chosenFrom = new HashMap<>();
    /** The filter under which each op is superseded, sent as a probe beside its blind writes. */
    private final Map<Integer, Bson> supersededWhen = new HashMap<>();
    /** The last write sent for each op, named when it makes no progress. */
    private final Map<Integer, WritePlan.Write> lastWrite = new HashMap<>();

    BatchApply(GuardedApplier applier, List<Operation> ops) {
        this.applier = applier;
        this.loop = applier.loop();
        this.ops = ops;
        this.results = new BatchResult[ops.size()];
    }

    List<BatchResult> apply(Predicate<Operation> likelyPresent) {
        Map<Integer, List<WritePlan.Write>> firsts = new LinkedHashMap<>();
        Set<Integer> pending = new LinkedHashSet<>();   // ops that continue from a read
        for (int i = 0; i < ops.size(); i++) {
            Operation op = ops.get(i);
            try {
                WritePlan plan = applier.plan(op);
                plans.put(i, plan);
                boolean hinted = likelyPresent.test(op);
                List<WritePlan.Write> first = hinted ? plan.firstIfPresent().map(List::of).orElse(List.of()) : plan.blind();
                if (!first.isEmpty()) {
                    firsts.put(i, first);
                    Optional<Bson> when = plan.supersededWhen();
                    // a hinted op's caller knows its element is stored below it (a view feeder, the one writer of
                    // its view): rarely overtaken, so no probe; nothing is above the largest seq
                    if (when.isPresent() && !hinted && op.seq() < Long.MAX_VALUE) {
                        supersededWhen.put(i, when.get());
                    }
                } else {
                    pending.add(i);
                }
            } catch (CannotApplyException e) {
                refuse(i, e);
            }
        }
        pending.addAll(write(firsts, true));
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
        Map<Integer, List<WritePlan.Write>> writes = new LinkedHashMap<>();
        // decided as each document arrives: no more than one cursor batch of documents is held beyond those
        // a write was chosen from
        try (MongoCursor<BsonDocument> documents = applier.reads().find(in(StoredFields.ID, ids)).iterator()) {
            while (documents.hasNext()) {
                BsonDocument doc = loop.inspected(documents.next());
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
        return write(writes, false);
    }

    /** {@code apply}'s decision after a read, for op {@code i}: its outcome, or the write it goes on with. */
    private void decide(int i, BsonDocument doc, Map<Integer, List<WritePlan.Write>> writes) {
        Operation op = ops.get(i);
        try {
            if (chosenFrom.containsKey(i) && Objects.equals(chosenFrom.get(i), doc)) {
                throw loop.noProgress(op, lastWrite.get(i), doc);
            }
            chosenFrom.remove(i);
            int failed = failedWrites.getOrDefault(i, 0);
            if (failed >= loop.maxAttempts()) {
                results[i] = new BatchResult.Failed(op, loop.gaveUp(op, failed));
                return;
            }
            WritePlan.Step step = loop.decide(op, plans.get(i), doc);
            if (step instanceof WritePlan.Step.Done done) {
                results[i] = done(op, done.outcome());
            } else {
                writes.put(i, List.of(((WritePlan.Step.Next) step).write()));
                chosenFrom.put(i, doc);
            }
        } catch (CannotApplyException e) {
            refuse(i, e);
        }
    }

    /**
     * Sends the writes {@link WriterChoice} picks from {@code candidates} in one bulk write and settles what it can;
     * returns the ops that go on to the next round.
     */
    private Set<Integer> write(Map<Integer, List<WritePlan.Write>> candidates, boolean blind) {
        Set<Integer> next = new LinkedHashSet<>();
        if (candidates.isEmpty()) {
            return next;
        }
        Map<Integer, Operation> candidateOps = new LinkedHashMap<>();
        candidates.keySet().forEach(i -> candidateOps.put(i, ops.get(i)));
        WriterChoice.Choice choice = WriterChoice.choose(candidateOps, applier.rankedNames());
        next.addAll(choice.waiting());
        choice.waiting().forEach(chosenFrom::remove);   // not written: no progress to judge
        choice.followers().values().forEach(f -> f.forEach(chosenFrom::remove));
        List<List<Integer>> commands = new ArrayList<>();
        List<Integer> bulk = new ArrayList<>();
        commands.add(bulk);
        boolean countedInBulk = false;
        Map<String, List<Integer>> comparedAndSet = new HashMap<>();   // entity to the command of its compare-and-set
        for (int i : choice.writers()) {
            boolean counted = counted(candidates.get(i));
            String entity = ops.get(i).entity();
            if (counted && comparedAndSet.containsKey(entity)) {
                // the first compare-and-set of its entity changes _v, so this one would miss. Its blind write goes
                // behind it instead, in the same command: a hot counter's increments that found no room all settle
                // once the first coalesces; where the first does not (or runs after: an unordered bulk write need
                // not keep the order), the blind write misses and a read decides, as after any blind write
                Optional<WritePlan.Write> behind = plans.get(i).first();
                chosenFrom.remove(i);
                if (behind.isEmpty() || counted(behind.get())) {
                    next.add(i);
                    next.addAll(choice.followersOf(i));
                } else {
                    candidates.put(i, List.of(behind.get()));
                    comparedAndSet.get(entity).add(i);
                }
                continue;
            }
            if (counted && countedInBulk) {
                List<Integer> own = new ArrayList<>(List.of(i));   // a bulk result counts its matches: one per command
                commands.add(own);
                comparedAndSet.put(entity, own);
            } else {
                bulk.add(i);
                if (counted) {
                    countedInBulk = true;
                    comparedAndSet.put(entity, bulk);
                }
            }
        }
        Set<String> changed = new HashSet<>();   // entities a write of this round changed
        for (int c = 0; c < commands.size(); c++) {
            if (!send(commands.get(c), candidates, choice, blind, next, changed)) {
                List<Integer> unsent = new ArrayList<>();
                commands.subList(c + 1, commands.size()).forEach(writers -> writers.forEach(w -> {
                    unsent.add(w);
                    unsent.addAll(choice.followersOf(w));
                }));
                unsent.forEach(chosenFrom::remove);
                alone.addAll(unsent);
                return next;
            }
        }
        return next;
    }

    /**
     * A round's command: the {@code writers}' writes in one unordered bulk write (see the class for how each one's
     * outcome is known). If it fails as a whole, its ops have their results (or are left to be applied on their
     * own), and so does every op waiting in {@code next}.
     */
    private boolean send(List<Integer> writers, Map<Integer, List<WritePlan.Write>> candidates,
                         WriterChoice.Choice choice, boolean blind, Set<Integer> next, Set<String> changed) {
        List<WriteModel<BsonDocument>> models = new ArrayList<>();
        List<BulkVerdicts.Statement> statements = new ArrayList<>();
        List<WritePlan.Write> sent = new ArrayList<>();        // the write of each model; null for a probe
        for (int i : writers) {
            List<WritePlan.Write> writes = candidates.get(i);
            lastWrite.put(i, writes.get(0));
            // after a read the followers' seqs were judged against the floor read; blind, the write is guarded on it
            List<Long> followed = blind ? choice.followersOf(i).stream().map(f -> ops.get(f).seq()).toList() : List.of();
            for (WritePlan.Write write : writes) {
                models.add(model(write, followed));
                statements.add(new BulkVerdicts.Statement(i, counted(write) ? BulkVerdicts.Kind.COUNTED
                        : BulkVerdicts.Kind.WRITE));
                sent.add(write);
            }
            if (blind && supersededWhen.containsKey(i)) {
                models.add(probe(supersededWhen.get(i), followed));
                statements.add(new BulkVerdicts.Statement(i, BulkVerdicts.Kind.PROBE));
                sent.add(null);
            }
        }
        String what = applier.describe(ops.get(writers.get(0))) + " and the rest of its batch";
        BulkWriteResult result;
        Map<Integer, BulkWriteError> errors = new HashMap<>();
        try {
            result = applier.collection().bulkWrite(models, new BulkWriteOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            if (e.getWriteConcernError() != null) {
                failAll(unsettled(writers, choice, next), what, e);
                return false;
            }
            result = e.getWriteResult();
            e.getWriteErrors().forEach(error -> errors.put(error.getIndex(), error));
        } catch (RuntimeException e) {
            OrderlessException error = MongoErrors.translate(what, e);
            List<Integer> unsettled = unsettled(writers, choice, next);
            if (error instanceof CannotApplyException || error instanceof TransientException t && !t.backendDown()) {
                // possibly one op's doing (too large for the driver, a connection its write drops): each on its
                // own tells whose, and the others are not held up by it
                unsettled.forEach(chosenFrom::remove);
                alone.addAll(unsettled);
            } else {
                failAll(unsettled, what, e);
            }
            return false;
        }
        Set<Integer> inserted = new HashSet<>();
        result.getUpserts().forEach(upsert -> inserted.add(upsert.getIndex()));
        List<BulkVerdicts.Result> results = new ArrayList<>();
        for (int k = 0; k < models.size(); k++) {
            BulkWriteError error = errors.get(k);
            results.add(error == null ? (inserted.contains(k) ? BulkVerdicts.Result.INSERTED : BulkVerdicts.Result.OK)
                    : sent.get(k) == null || missed(sent.get(k), error) ? BulkVerdicts.Result.MISSED
                    : BulkVerdicts.Result.FAILED);
        }
        List<Integer> missed = new ArrayList<>();
        BulkVerdicts.of(statements, results, result.getMatchedCount()).forEach((i, verdict) -> {
            switch (verdict) {
                case APPLIED -> {
                    applied(i, choice);
                    changed.add(ops.get(i).entity());
                }
                case SUPERSEDED -> superseded(i, choice);            // as a read would find it
                case OWN_ERROR -> {
                    next.addAll(choice.followersOf(i));
                    alone.add(i);                                   // its own error: classified as apply does
                    chosenFrom.remove(i);
                }
                case MISSED -> {
                    next.addAll(choice.followersOf(i));
                    missed.add(i);                                  // did not match: decide from the document
                }
            }
        });
        // a write that missed because another write of its own round changed the document first did not fail:
        // that was progress, and counting it would give up on an op for contending with its own batch
        missed.forEach(i -> matchedNothing(i, blind || changed.contains(ops.get(i).entity()), next));
        return true;
    }

    /**
     * The bulk write's model of {@code write}, whose op is followed by lower seqs of its slot: {@code followed}.
     *
     * <ul>
     *   <li>Guarded too on the delete floor being none of {@code followed}: where it matched, the slot holds a
     *       higher seq than each of them and none collides with a delete's, so each is superseded, with no read.
     *   <li>An in-place refresh (or heal) goes as an upsert that also sets another {@code _id} on insert, so that
     *       it never inserts (with no document to take the position from, MongoDB refuses the position or the
     *       change of {@code _id}) and its miss is its own write error, never only a count.
     *   <li>A compare-and-set on {@code _v} stays a plain update, counted ({@link #counted}): as an upsert it
     *       would insert what it read where its document was removed meanwhile, with a version another write
     *       chose from.
     * </ul>
     */
    private static UpdateOneModel<BsonDocument> model(WritePlan.Write write, List<Long> followed) {
        Bson filter = followed.isEmpty() ? write.filter() : Filters.and(write.filter(), Queries.floorNoneOf(followed));
        if (!positional(write)) {
            return new UpdateOneModel<>(filter, write.update(), new UpdateOptions().upsert(write.upsert()));
        }
        return new UpdateOneModel<>(filter, Updates.combine(write.update(),
                Updates.setOnInsert(StoredFields.ID, NEVER_INSERTED)), new UpdateOptions().upsert(true));
    }

    /** A refresh (or heal) in place sets an array entry by position. */
    private static boolean positional(WritePlan.Write write) {
        return write.shape().equals("refresh") || write.shape().equals("heal");
    }

    /** An op whose one write is {@link #counted(WritePlan.Write) counted} (a compare-and-set is never sent beside another). */
    private static boolean counted(List<WritePlan.Write> writes) {
        return writes.size() == 1 && counted(writes.get(0));
    }

    /** A plain update whose outcome only the command's matched count tells: a compare-and-set on {@code _v}. */
    private static boolean counted(WritePlan.Write write) {
        return !write.upsert() && !positional(write);
    }

    /**
     * True if {@code error} is {@code write}'s own "matched nothing": a duplicate {@code _id} (the insert of a
     * document that is there), or, for a refresh in place, its insert refused (by position, or as a change of
     * {@code _id}).
     */
    private static boolean missed(WritePlan.Write write, BulkWriteError error) {
        return MongoErrors.isDuplicateIdKey(error) || positional(write) && (MongoErrors.isPositionalMiss(error)
                || error.getCode() == IMMUTABLE_FIELD);
    }

    /** {@code writers}, their followers and the ops waiting in {@code next}: all that a failed command leaves. */
    private static List<Integer> unsettled(List<Integer> writers, WriterChoice.Choice choice, Set<Integer> next) {
        List<Integer> unsettled = new ArrayList<>(writers);
        writers.forEach(w -> unsettled.addAll(choice.followersOf(w)));
        unsettled.addAll(next);
        next.clear();
        return unsettled;
    }

    /**
     * Op {@code i}'s write is known to have matched: it is applied, and what followed it is superseded (the slot
     * holds a higher seq, and the write was guarded on the floor being none of theirs; see {@link #model}).
     */
    private void applied(int i, WriterChoice.Choice choice) {
        results[i] = done(ops.get(i), Outcome.APPLIED);
        chosenFrom.remove(i);
        choice.followersOf(i).forEach(f -> results[f] = done(ops.get(f), Outcome.SUPERSEDED));
    }

    /**
     * Op {@code i}'s probe matched and none of its writes did: it is superseded, and so is what followed it (a
     * higher seq or floor is above theirs too, and the probe was guarded on the floor being none of theirs).
     */
    private void superseded(int i, WriterChoice.Choice choice) {
        results[i] = done(ops.get(i), Outcome.SUPERSEDED);
        chosenFrom.remove(i);
        choice.followersOf(i).forEach(f -> results[f] = done(ops.get(f), Outcome.SUPERSEDED));
    }

    /**
     * The probe of an op whose writes go blind: an upsert under {@code when} (and the floor none of {@code followed})
     * that changes nothing where it matches and, where it matches nothing, fails alone, inserting nothing: its only
     * change is on insert, to a field inside the string {@code _id} it would insert (refused as a change of
     * {@code _id} by MongoDB, as a path that cannot be created by the embedded server). A bulk write's probes
     * write nothing; each says by its error whether its op is superseded.
     */
    private static UpdateOneModel<BsonDocument> probe(Bson when, List<Long> followed) {
        Bson filter = followed.isEmpty() ? when : Filters.and(when, Queries.floorNoneOf(followed));
        return new UpdateOneModel<>(filter, Updates.setOnInsert(INSIDE_ID, NEVER_INSERTED.getString("orderless")),
                new UpdateOptions().upsert(true));
    }

    /**
     * Op {@code i}'s write matched nothing: a read decides. It counts as an attempt ({@link
     * ApplierOptions#maxAttempts()} counts writes chosen from a read, which the next read judges: no progress
     * first, then the limit, as {@code apply} does) unless {@code notAnAttempt}: a blind first write, or a write
     * whose document another write of the same round changed first (progress, by its own batch).
     */
    private void matchedNothing(int i, boolean notAnAttempt, Set<Integer> next) {
        loop.retried();
        if (!notAnAttempt) {
            failedWrites.merge(i, 1, Integer::sum);
        }
        next.add(i);
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
