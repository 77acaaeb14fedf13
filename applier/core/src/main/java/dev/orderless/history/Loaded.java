package dev.orderless.history;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.ReferenceModel;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;

/**
 * One entity's records, as read: its folded-state record if it has one, and its other records, sorted by what
 * they are to the folded state.
 *
 * <p>A folded state written by retention ({@code baseline} empty) was folded from records: the records at or
 * below its horizon recorded before its cutoff are in it ({@code leftover}: a pass did not get to drop them, and
 * reads skip them); those recorded after it arrived late ({@code late}: no state of the entity from the history
 * includes them, so every read says it cannot tell).
 *
 * <p>A folded state taken by the baseline ({@code baseline} present) is the live document's, which holds what
 * had been applied when it was read: a record at or below its horizon may be in it (applied, or a redelivery of
 * an operation applied before the history was on) or not (recorded, not applied yet; or delivered for the first
 * time since). Each is merged into it ({@code merged}): the state of a set of operations with another operation
 * merged is the state of both, whatever their seqs, and merging one already in it changes nothing (the guarded
 * apply's convergence, {@link ReferenceModel}). So every record counts, once, and no clock decides which. The
 * exception: where compaction had dropped tombstones before the baseline ({@link Baseline#compacted()}), an add or
 * remove at or below that seq of an element the state has no entry for cannot be judged, as the live applier
 * cannot judge it ({@code unjudged}: kept, merged nowhere); and likewise where it had folded a counter's increments
 * into their sum ({@link Ledger}), an increment at or below the fold, or a delete below it.
 *
 * @param record   the folded-state record as stored, for a write guarded by all of it
 * @param stored   the state it holds (the empty state if none)
 * @param baseline what the baseline found, if the state was taken from the live document
 * @param folded   the state as of {@code horizon}: {@code stored}, with the merged records
 * @param ledger   what the folded state keeps of its counters and ranked registers ({@link Ledger})
 * @param horizon  the seq the folded state is as of (0 if none)
 * @param gcFloor  the live document's compaction floor that the records accounted for when retention folded the
 *                 state ({@link Records#withGcFloor}; 0 if none)
 * @param above    the records above it, in seq order
 */
record Loaded(String entity, Optional<BsonDocument> record, EntityState stored, Optional<Baseline> baseline,
              EntityState folded, Ledger ledger, long horizon, long gcFloor, List<BsonDocument> above, List<BsonDocument> late,
              List<BsonDocument> leftover, List<BsonDocument> merged, List<BsonDocument> unjudged) {

    static Loaded of(String entity, List<BsonDocument> all, ReferenceModel model) {
        Optional<BsonDocument> record = Optional.empty();
        EntityState stored = History.empty(entity);
        Ledger storedLedger = Ledger.EMPTY;
        Optional<Baseline> baseline = Optional.empty();
        long horizon = 0;
        long gcFloor = 0;
        Instant cutoff = Instant.MIN;
        List<BsonDocument> records = new ArrayList<>();
        for (BsonDocument r : all) {
            if (Records.isFolded(r)) {
                record = Optional.of(r);
                stored = Records.stateOf(r);
                storedLedger = Records.ledgerOf(r);
                horizon = Records.horizonOf(r);
                gcFloor = Records.gcFloorOf(r);
                cutoff = Records.cutoffOf(r);
                baseline = Records.baselineOf(r);
            } else {
                records.add(r);
            }
        }
        List<BsonDocument> above = new ArrayList<>();
        List<BsonDocument> below = new ArrayList<>();
        List<BsonDocument> late = new ArrayList<>();
        List<BsonDocument> leftover = new ArrayList<>();
        for (BsonDocument r : records) {
            if (Records.seqOf(r) > horizon) {
                above.add(r);
            } else if (baseline.isPresent()) {
                below.add(r);
            } else {
                (Records.atOf(r).isBefore(cutoff) ? leftover : late).add(r);
            }
        }
        List<BsonDocument> merged = new ArrayList<>();
        List<BsonDocument> unjudged = new ArrayList<>();
        Merged folded = new Merged(stored, storedLedger);
        if (!below.isEmpty()) {
            List<Operation> judged = judge(stored, storedLedger, baseline.get().compacted(), below, merged, unjudged);
            folded = judged.isEmpty() ? folded : merge(model, stored, storedLedger, Ledger.EMPTY, judged);
        }
        return new Loaded(entity, record, stored, baseline, folded.state(), folded.ledger(), horizon, gcFloor, above,
                late, leftover, merged, unjudged);
    }

    /** A state and its ledger. */
    record Merged(EntityState state, Ledger ledger) {
    }

    /**
     * The state of {@code state}'s operations (with its {@code ledger}) and {@code ops} together, in seq order
     * whatever theirs; where {@code folds} folded a counter's increments up to a higher seq than {@code ledger}
     * did, its sum stands for them (both are the live document's compaction, at two times). {@code ops} must hold no
     * increment at or below a fold, nor a delete below one: they are left unjudged ({@link #judge}).
     */
    static Merged merge(ReferenceModel model, EntityState state, Ledger ledger, Ledger folds, List<Operation> ops) {
        List<Operation> all = new ArrayList<>(Rebuilder.standingFor(state, ledger));
        all.addAll(ops);
        EntityState replayed = model.replay(all).getOrDefault(state.entity(), History.empty(state.entity()));
        Ledger merged = ledger.foldsOnly(folds).after(all, model.schema());
        return keepBeforeOrderless(new Merged(new EntityState(replayed.entity(), replayed.floor(), replayed.live(),
                replayed.tombstones(), replayed.registers(), merged.values()), merged), state, model.schema());
    }

    /**
     * {@code merged} with the registers of {@code from} written before orderless (seq 0, which no operation stands
     * for, so a merge cannot replay them): each stays where no delete came since and no assignment replaced it (a
     * ranked one: none outranked it).
     */
    static Merged keepBeforeOrderless(Merged merged, EntityState from, CollectionSchema schema) {
        if (merged.state().floor() > 0) {
            return merged;
        }
        Map<String, EntityState.Register> registers = new java.util.HashMap<>(merged.state().registers());
        Ledger ledger = merged.ledger();
        for (var entry : from.registers().entrySet()) {
            EntityState.Register register = entry.getValue();
            EntityState.Register now = registers.get(entry.getKey());
            Optional<dev.orderless.apply.RankedField> ranked = schema.ranked(entry.getKey());
            if (register.seq() == 0 && (now == null || ranked.map(r -> Ledger.rank(r, register.value())
                    > Ledger.rank(r, now.value())).orElse(false))) {
                registers.put(entry.getKey(), register);
                if (ranked.isPresent()) {
                    ledger = ledger.withCandidateBeforeOrderless(entry.getKey(), register.value());
                }
            }
        }
        EntityState s = merged.state();
        return new Merged(new EntityState(s.entity(), s.floor(), s.live(), s.tombstones(), registers, s.counters()),
                ledger);
    }

    /**
     * The operations of {@code below} (in seq order) that can be judged against {@code state}, each added to
     * {@code merged}; the others (an add or remove above the floor, at or below {@code compacted}, of an element
     * with no entry; an increment at or below a counter's fold, or a delete below one, {@link Ledger}) to
     * {@code unjudged}. An operation judged creates its element's entry if it is above the floor.
     */
    private static List<Operation> judge(EntityState state, Ledger ledger, long compacted, List<BsonDocument> below,
                                         List<BsonDocument> merged, List<BsonDocument> unjudged) {
        Set<String> entries = new HashSet<>();
        state.live().forEach((field, elements) -> elements.keySet().forEach(e -> entries.add(key(field, e))));
        state.tombstones().forEach((field, removed) -> removed.keySet().forEach(e -> entries.add(key(field, e))));
        long floor = state.floor();
        List<Operation> judged = new ArrayList<>();
        for (BsonDocument r : below) {
            Operation op = Records.operationOf(r);
            String key = op instanceof Operation.Add add ? key(add.field(), add.element())
                    : op instanceof Operation.Remove remove ? key(remove.field(), remove.element()) : null;
            if (key != null && op.seq() > floor && op.seq() <= compacted && !entries.contains(key)
                    || unjudgedByFolds(op, ledger, floor)) {
                unjudged.add(r);
                continue;
            }
            judged.add(op);
            merged.add(r);
            if (key != null && op.seq() > floor) {
                entries.add(key);
            }
            if (op instanceof Operation.Delete) {
                floor = Math.max(floor, op.seq());
            }
        }
        return judged;
    }

    /** True if {@code op} falls where a counter's increments were folded into their sum (above {@code floor}). */
    private static boolean unjudgedByFolds(Operation op, Ledger ledger, long floor) {
        if (op.seq() <= floor) {
            return false;   // superseded: it changes nothing whatever it is
        }
        return ledger.foldOver(op).isPresent();
    }

    private static String key(String field, String element) {
        return field + '\u0000' + element;
    }

    /** Every record but the folded state's. */
    List<BsonDocument> records() {
        List<BsonDocument> all = new ArrayList<>(above);
        all.addAll(late);
        all.addAll(leftover);
        all.addAll(merged);
        all.addAll(unjudged);
        return all;
    }

    /** Why no state of the entity can be told: the baseline could not read its live document, if so. */
    Optional<String> unreadable() {
        return baseline.flatMap(Baseline::unreadable).map(why -> "the baseline could not read the live document of '"
                + entity + "' as an orderless state (" + why + ") and took nothing of it: the history vouches for no"
                + " state of it until the document is repaired and a baseline pass (History.baseline) takes it in");
    }

    /** Why the state as of {@code seq} cannot be told from the records, if it cannot. */
    Optional<String> unknowableAt(long seq) {
        Optional<String> unreadable = unreadable();
        if (unreadable.isPresent()) {
            return unreadable;
        }
        if (!late.isEmpty()) {
            return Optional.of(late.size() + " operation(s) of '" + entity + "' (first: seq "
                    + Records.seqOf(late.get(0)) + ") were recorded after retention folded everything up to seq "
                    + horizon + ": they arrived later than the retention period allows, and no state of this"
                    + " entity from the history includes them");
        }
        if (baseline.isPresent() && seq < baseline.get().horizon()) {
            return Optional.of("seq " + seq + " of '" + entity + "' is below its baseline horizon "
                    + baseline.get().horizon() + ": it had operations before the history was on, and the history"
                    + " vouches for its state only from that seq on (taken from its live document by the baseline)");
        }
        if (seq < horizon) {
            return Optional.of("seq " + seq + " of '" + entity + "' is below its retention horizon " + horizon
                    + ": the versions before it were folded into one state and dropped");
        }
        return Optional.empty();
    }

    /**
     * Why {@code state} (a state of this entity at or above the horizon) cannot be told, if it cannot: its
     * baseline was taken after compaction had dropped tombstones, and no delete has superseded them since.
     */
    Optional<String> unknowableState(EntityState state) {
        long compacted = baseline.map(Baseline::compacted).orElse(0L);
        if (compacted > state.floor()) {
            return Optional.of("compaction had dropped tombstones of '" + entity + "' up to seq " + compacted
                    + " from its live document before the baseline took its state: the history cannot tell which"
                    + " elements were removed by then, so it knows a state of it only after a delete above that seq");
        }
        return Optional.empty();
    }

    /**
     * True if the folded state accounts for {@code seq}, shown by the live document (whose {@code _gcFloor} is
     * {@code liveGcFloor}) but recorded nowhere: the state shows it, or it is at or below the state's floor (what
     * a delete superseded), or at or below the compaction floor the baseline found, or it is the live document's own
     * compaction floor and the records accounted for it when retention folded them ({@link Records#withGcFloor}: the
     * seq of a tombstone compaction dropped, whose record retention folded since). A compaction floor accounted for
     * by none of these is the seq of an operation applied without recording (a rolling upgrade's older instance)
     * whose tombstone compaction dropped: which element it removed is not known. A seq of the live document that a
     * folded record was folded from shows in the folded state as soon as the document has applied what the folded
     * state holds.
     */
    boolean vouchesFor(long seq, long liveGcFloor) {
        if (record.isEmpty()) {
            return false;
        }
        return seq <= stored.floor() || seq <= baseline.map(Baseline::compacted).orElse(0L)
                || (seq == liveGcFloor && seq == gcFloor) || ReferenceModel.witnesses(stored).contains(seq)
                || ledger.accountsFor(seq);
    }

    /**
     * The first seq from {@code lo} to {@code hi}, a run of counter {@code field}'s increments on the live document,
     * that neither a record ({@code recorded}) nor the folded state accounts for, if any: every seq of a live run was
     * an increment there, but the document shows only its two ends.
     */
    java.util.OptionalLong firstUnaccounted(String field, long lo, long hi, Set<Long> recorded) {
        List<long[]> covered = new ArrayList<>();
        if (record.isPresent()) {
            Ledger.Counted c = ledger.counted(field);
            covered.add(new long[] {Long.MIN_VALUE, Math.max(Math.max(stored.floor(), baseline.map(Baseline::compacted)
                    .orElse(0L)), c.folded() ? c.upTo() : 0)});
            c.runs().forEach((from, run) -> covered.add(new long[] {from, run.hi()}));
            c.listed().keySet().forEach(seq -> covered.add(new long[] {seq, seq}));
        }
        recorded.stream().filter(seq -> seq >= lo && seq <= hi).forEach(seq -> covered.add(new long[] {seq, seq}));
        covered.sort(java.util.Comparator.comparingLong(interval -> interval[0]));
        long next = lo;   // the lowest seq not yet covered
        for (long[] interval : covered) {
            if (interval[0] > next) {
                break;
            }
            if (interval[1] >= next) {
                if (interval[1] >= hi) {
                    return java.util.OptionalLong.empty();
                }
                next = interval[1] + 1;
            }
        }
        return next <= hi ? java.util.OptionalLong.of(next) : java.util.OptionalLong.empty();
    }

    /** The seqs of every record but the folded state's. */
    Set<Long> recordedSeqs() {
        Set<Long> seqs = new HashSet<>();
        records().forEach(r -> seqs.add(Records.seqOf(r)));
        return seqs;
    }
}
