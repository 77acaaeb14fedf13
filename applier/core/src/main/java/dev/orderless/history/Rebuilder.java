package dev.orderless.history;

import dev.orderless.OrderlessException;
import dev.orderless.TransientException;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.internal.CounterRestore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recomputes live documents from the history, through a guarded applier: disaster recovery (a collection
 * lost or damaged), or a copy in a new collection.
 *
 * <ol>
 *   <li>For each entity, in entity order: the operations that stand for its folded state, if retention folded
 *       any or the baseline took one (an add per live element, a remove per tombstone, an assign per register and
 *       per ranked candidate, an increment per counted increment, a delete at the floor, each with the seq that
 *       wrote it, so each equals the operation it stands for), then every record, late ones included (the live
 *       document received them too); once those are applied, each counter's increments folded into one sum and
 *       coalesced into runs ({@link Ledger}), written as the live document keeps them
 *       ({@link dev.orderless.apply.internal.CounterRestore}), which no operation can stand for.
 *   <li>Except an entity whose state the history cannot vouch for: the history does not know its live collection
 *       or its start was never decided, or the baseline is under way and has not taken the entity in (it may have
 *       had operations before the history was on), or its live document holds state no record accounts for
 *       (applied before the history was on, or by a consumer that does not record), or an operation of it is below
 *       the compaction floor the baseline found, on an element it had no entry for, or its latest state reads
 *       Unknowable because compaction had dropped tombstones the history cannot account for (before the baseline,
 *       or after it, of an operation applied without recording) and no delete has superseded them, or the baseline
 *       could not read its live document, or it holds a value written before orderless (seq 0: no operation stands
 *       for it). Rather than write a state without what it cannot know (a removed element brought back), the
 *       rebuild leaves it out, counts it ({@link Rebuild#unrestored()}) and says why.
 *   <li>Apply them with {@link GuardedApplier#applyAll} in batches of {@link HistoryOptions#rebuildBatch()}.
 *       Guarded: an operation already there is a duplicate or superseded, so a rebuild can run while consumers
 *       run, be repeated, or resume a rebuild that stopped.
 *   <li>An op that failed (MongoDB unavailable) is applied again on its own, up to three times; what still
 *       fails or is refused is counted in the result and logged, never dropped in silence.
 * </ol>
 * What a rebuild cannot recover: nothing of the state, as long as the history itself survives; but the
 * versions below a retention horizon are gone (only the folded state is left), and so is the live document's
 * bookkeeping (its {@code _v}, its tombstones' times, its compaction floor), which a rebuild writes anew.
 */
final class Rebuilder {
    private static final Logger log = LoggerFactory.getLogger(Rebuilder.class);
    private static final int ATTEMPTS = 3;
    private static final int MAX_REASONS = 100;

    private final History history;
    private final GuardedApplier target;
    private final List<Operation> pending = new ArrayList<>();
    /** The counters of {@link #pending}'s entities whose folds and runs are written once their operations are applied. */
    private final List<Restore> restores = new ArrayList<>();

    /** A counter's fold and runs to write on the target ({@link CounterRestore}). */
    private record Restore(String entity, String field, Ledger.Counted counted) {
    }
    private long entities;
    private long operations;
    private long applied;
    private long beyondHorizon;
    private long refused;
    private long failed;
    private long unrestored;
    private final List<String> reasons = new ArrayList<>();

    Rebuilder(History history, GuardedApplier target) {
        if (target == null) {
            throw new IllegalArgumentException("rebuild: the target applier is required");
        }
        this.history = history;
        this.target = target;
    }

    Rebuild all() {
        history.forEachEntity(this::add);
        return finish();
    }

    Rebuild one(String entity) {
        add(history.load(entity));
        return finish();
    }

    private void add(Loaded loaded) {
        entities++;
        Optional<String> unknown = unrestorable(loaded);
        if (unknown.isPresent()) {
            unrestored++;
            if (reasons.size() < MAX_REASONS) {
                reasons.add(unknown.get());
            }
            log.error("rebuild: '{}' left out of {}: {}", loaded.entity(),
                    target.reads().getNamespace().getCollectionName(), unknown.get());
            return;
        }
        pending.addAll(standingFor(loaded.folded(), loaded.ledger()));
        loaded.ledger().counters().forEach((field, c) -> {
            if (c.folded() && c.upTo() > 0 || !c.runs().isEmpty()) {
                restores.add(new Restore(loaded.entity(), field, c));
            }
        });
        loaded.late().forEach(record -> {
            Operation op = Records.operationOf(record);
            if (!foldedInto(op, loaded.ledger())) {   // one folded is counted in its sum or refused by the live one
                pending.add(op);
            }
        });
        loaded.above().forEach(record -> pending.add(Records.operationOf(record)));
        if (pending.size() >= history.options().rebuildBatch()) {
            flush();
        }
    }

    /**
     * Why the history cannot vouch for the state of {@code loaded}'s entity, if it cannot: operations it cannot
     * judge, or a live document it cannot explain. The records were read before the document here, so an
     * operation recorded and applied in between would look unexplained: the records are read again first.
     */
    private Optional<String> unrestorable(Loaded loaded) {
        Optional<String> unvouched = history.unvouched(loaded);
        if (unvouched.isPresent()) {
            return unvouched;
        }
        if (loaded.unreadable().isPresent()) {
            return loaded.unreadable();
        }
        Optional<String> beforeOrderless = loaded.ledger().writtenBeforeOrderless()
                .or(() -> loaded.folded().registers().entrySet().stream().filter(r -> r.getValue().seq() == 0)
                        .findFirst().map(r -> "register '" + r.getKey() + "' holds a value written before orderless"))
                .map(what -> "'" + loaded.entity() + "': " + what + ", which no operation stands for: a rebuild"
                        + " cannot write it");
        if (beforeOrderless.isPresent()) {
            return beforeOrderless;
        }
        Optional<Operation> unsure = loaded.late().stream().map(Records::operationOf).filter(op ->
                loaded.ledger().foldOver(op).filter(c -> !c.asLive()).isPresent()).findFirst();
        if (unsure.isPresent()) {
            return Optional.of("'" + loaded.entity() + "': " + (unsure.get() instanceof Operation.Delete ? "delete"
                    : "increment") + " seq " + unsure.get().seq() + " was recorded after retention folded a counter's"
                    + " increments up to and above it into their sum, without the live document: it cannot tell"
                    + " whether the sum has it or what it would have removed; give the history its live collection"
                    + " (History.withLive) so that retention folds only what the live document folded");
        }
        List<BsonDocument> unjudged = loaded.unjudged().stream()
                .filter(record -> !foldedInto(Records.operationOf(record), loaded.ledger())).toList();
        if (!unjudged.isEmpty()) {
            return Optional.of(unjudged.size() + " operation(s) of '" + loaded.entity() + "' (first: seq "
                    + Records.seqOf(unjudged.get(0)) + ") are below the compaction floor "
                    + loaded.baseline().map(Baseline::compacted).orElse(0L) + " its live document had when the"
                    + " baseline took it, on elements it had no entry for, or below a counter's increments it had"
                    + " folded: the history cannot judge them");
        }
        if (loaded.baseline().map(Baseline::compacted).orElse(0L) > 0) {
            List<Operation> above = new ArrayList<>();
            loaded.above().forEach(record -> above.add(Records.operationOf(record)));
            Optional<String> latest = loaded.unknowableState(history.model().continueFrom(loaded.folded(), above));
            if (latest.isPresent()) {
                return latest;   // its latest state reads Unknowable: written, it could hold a removed element
            }
        }
        Optional<BsonDocument> document = history.liveDocument(loaded.entity());
        if (document.isEmpty() || history.unexplained(loaded, document).isEmpty()) {
            return Optional.empty();
        }
        return history.unexplained(history.load(loaded.entity()), document);
    }

    /**
     * Operations whose guarded apply, in any order, gives {@code state} with {@code ledger}, but for its counters' folds
     * and runs ({@link Ledger#standing}): each with the seq that wrote its part. A value written before orderless (seq
     * 0) has none.
     */
    static List<Operation> standingFor(EntityState state, Ledger ledger) {
        List<Operation> ops = new ArrayList<>();
        if (state.floor() > 0) {
            ops.add(Operation.delete(state.entity(), state.floor()));
        }
        state.live().forEach((field, elements) -> elements.forEach((element, e) ->
                ops.add(Operation.add(state.entity(), e.seq(), field, element, e.attrs()))));
        state.tombstones().forEach((field, removed) -> removed.forEach((element, seq) ->
                ops.add(Operation.remove(state.entity(), seq, field, element))));
        state.registers().forEach((field, r) -> {
            if (r.seq() > 0 && !ledger.ranked().containsKey(field)) {   // a ranked one: its candidates stand for it
                ops.add(Operation.assign(state.entity(), r.seq(), field, r.value()));
            }
        });
        ops.addAll(ledger.standing(state.entity()));
        return ops;
    }

    /**
     * True if {@code op} falls under a counter's fold where the live document folded too (an increment at or below
     * it, a delete below it): the live applier counted it there once or refused it as beyond its horizon.
     */
    private static boolean foldedInto(Operation op, Ledger ledger) {
        return ledger.foldOver(op).filter(Ledger.Counted::asLive).isPresent();
    }

    private Rebuild finish() {
        flush();
        Rebuild done = new Rebuild(entities, operations, applied, beyondHorizon, refused, failed, unrestored, reasons);
        log.info("rebuilt {} entities from {} into {}: {} operations, {} applied, {} beyond the target's compaction"
                        + " horizon, {} refused, {} failed, {} entities left out (the history cannot vouch for their"
                        + " state)", entities, history.name(), target.reads().getNamespace().getCollectionName(),
                operations, applied, beyondHorizon, refused, failed, unrestored);
        return done;
    }

    private void flush() {
        if (!pending.isEmpty()) {
            List<BatchResult> results = target.applyAll(List.copyOf(pending));
            operations += pending.size();
            pending.clear();
            for (BatchResult result : results) {
                if (result instanceof BatchResult.Done done) {
                    count(done.outcome());
                } else if (result instanceof BatchResult.Refused r) {
                    refused++;
                    log.error("rebuild: {} refused by the target: {}", r.op(), r.reason().getMessage());
                } else {
                    again(result.op(), ((BatchResult.Failed) result).error());
                }
            }
        }
        restoreCounters();
    }

    /**
     * Each rebuilt counter's fold and runs, written on the target as the live document keeps them, once the entity's
     * operations are applied (retried ones included): one increment could not stand for them, as a lower seq
     * delivered again there would be counted a second time, a consumer's redelivery of one of a run's seqs beside the
     * rebuild would collide with it, and a run's seqs one by one would cost a write each.
     */
    private void restoreCounters() {
        CounterRestore restore = CounterRestore.on(target.reads(), ATTEMPTS);
        for (Restore r : restores) {
            java.util.SortedMap<Long, java.util.Map.Entry<Long, java.math.BigInteger>> runs = new java.util.TreeMap<>();
            r.counted().runs().forEach((lo, run) -> runs.put(lo, java.util.Map.entry(run.hi(), run.sum())));
            operations++;
            try {
                Optional<String> refused = restore.restore(r.entity(), r.field(), r.counted().folded()
                        ? r.counted().upTo() : 0, r.counted().base(), runs, java.time.Instant.now());
                if (refused.isPresent()) {
                    this.refused++;
                    log.error("rebuild: {} refused by the target: {}", r, refused.get());
                } else {
                    applied++;
                }
            } catch (OrderlessException e) {
                failed++;
                log.error("rebuild: '{}' counter '{}': its folded and coalesced increments not written on the target"
                        + " ({}); rebuild it again", r.entity(), r.field(), e.getMessage());
                if (e instanceof TransientException t && t.backendDown()) {
                    restores.clear();
                    throw t;
                }
            }
        }
        restores.clear();
    }

    private void again(Operation op, OrderlessException first) {
        OrderlessException last = first;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                count(target.apply(op));
                return;
            } catch (dev.orderless.CannotApplyException e) {
                refused++;
                log.error("rebuild: {} refused by the target: {}", op, e.getMessage());
                return;
            } catch (OrderlessException e) {
                last = e;
            }
        }
        failed++;
        log.error("rebuild: {} not applied after {} attempts ({}); rebuild again once MongoDB answers", op, ATTEMPTS,
                last.getMessage());
        if (last instanceof TransientException t && t.backendDown()) {
            throw t;   // the rest would fail the same way, one by one
        }
    }

    private void count(Outcome outcome) {
        if (outcome == Outcome.APPLIED) {
            applied++;
        } else if (outcome == Outcome.BEYOND_HORIZON) {
            beyondHorizon++;
        }
    }
}
