package dev.orderless.history;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.Operation;
import dev.orderless.apply.RankedField;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.bson.BsonValue;

/**
 * What a folded state keeps beside its {@link dev.orderless.apply.EntityState} for the types whose state is not the
 * sum of its parts' seqs: so that an operation at or below the state's horizon can still be merged into it exactly
 * (the baseline's records, {@link Loaded}), a rebuild writes it back, and what a live document shows of them is
 * accounted for ({@link Loaded#vouchesFor}).
 *
 * <ul>
 *   <li>Per counter ({@link Counted}): the increments it counts, each with its seq ({@code listed}), so that merging
 *       one again changes nothing and a merged delete keeps exactly those above it; the runs of consecutive seqs the
 *       live document coalesced them into, each with its sum ({@code runs}: every seq of a run counted, a delete never
 *       inside one); except those folded into one sum ({@code base}), up to a seq ({@code upTo}): those the live document's compaction had folded when the
 *       baseline took it, or retention folded where the live document had folded them too (or where the history
 *       has no live document to account for). An increment at or below {@code upTo}, or a delete below it, cannot
 *       be merged exactly: it is left unjudged, as the live applier refuses it as beyond its horizon.
 *   <li>Per ranked register: its candidates, the assignments above the floor that no assignment with a higher seq
 *       outranks or equals (the winner among them), as the live document keeps them in {@code _ranked}: a merged
 *       delete brings back those above it.
 * </ul>
 * Immutable; every change returns a new ledger.
 */
record Ledger(Map<String, Counted> counters, Map<String, List<Candidate>> ranked) {

    static final Ledger EMPTY = new Ledger(Map.of(), Map.of());

    Ledger {
        counters = Collections.unmodifiableMap(new TreeMap<>(counters));
        Map<String, List<Candidate>> copy = new TreeMap<>();
        ranked.forEach((field, candidates) -> {
            if (!candidates.isEmpty()) {
                copy.put(field, List.copyOf(candidates));
            }
        });
        ranked = Collections.unmodifiableMap(copy);
    }

    /**
     * A counter's bookkeeping: its value is {@code base} while {@code folded} (a sum of increments whose seqs are
     * not kept, all at or below {@code upTo}; {@code upTo} 0 for a value written before orderless) plus every
     * {@code listed} delta. {@code asLive}: the live document had folded its increments up to {@code upTo} too, so
     * an increment at or below it delivered again was counted there once or refused as beyond its horizon; false
     * where retention folded without the live document (the history does not know it, {@link History#of}).
     */
    record Counted(boolean folded, long upTo, BigInteger base, SortedMap<Long, Long> listed, boolean asLive,
                   SortedMap<Long, Run> runs) {
        static final Counted NONE = new Counted(false, 0, BigInteger.ZERO, new TreeMap<>());

        Counted {
            listed = Collections.unmodifiableSortedMap(new TreeMap<>(listed));
            runs = Collections.unmodifiableNavigableMap(new TreeMap<>(runs));   // navigable: inRun
        }

        Counted(boolean folded, long upTo, BigInteger base, SortedMap<Long, Long> listed) {
            this(folded, upTo, base, listed, true);
        }

        Counted(boolean folded, long upTo, BigInteger base, SortedMap<Long, Long> listed, boolean asLive) {
            this(folded, upTo, base, listed, asLive, new TreeMap<>());
        }

        boolean present() {
            return folded || !listed.isEmpty() || !runs.isEmpty();
        }

        /** The exact sum, as the live applier keeps it ({@link dev.orderless.apply.CounterValues}). */
        BigInteger value() {
            BigInteger sum = folded ? base : BigInteger.ZERO;
            for (long delta : listed.values()) {
                sum = sum.add(BigInteger.valueOf(delta));
            }
            for (Run run : runs.values()) {
                sum = sum.add(run.sum());
            }
            return sum;
        }

        /** True if a run holds {@code seq}: an increment there is counted already. */
        boolean inRun(long seq) {
            Map.Entry<Long, Run> atOrBelow = ((java.util.NavigableMap<Long, Run>) runs).floorEntry(seq);
            return atOrBelow != null && atOrBelow.getValue().hi() >= seq;
        }

        /** True if an increment at {@code seq} may be in {@code base}, and so cannot be merged exactly. */
        boolean foldedAt(long seq) {
            return folded && seq <= upTo;
        }
    }

    /**
     * Consecutive seqs counted as one, from the run's key to {@code hi}, their deltas summing to {@code sum} (what the
     * live document keeps in {@code _incRuns}).
     */
    record Run(long hi, BigInteger sum) {
    }

    /**
     * This ledger with each counter's consecutive listed increments coalesced into runs where it lists more than the
     * live document keeps one by one ({@link dev.orderless.apply.internal.CounterBook#PENDING_MAX}), as the live
     * document coalesces them: a hot counter's folded state stays about as small as its live document (a run answers a
     * late increment or delete as the live document's does).
     */
    Ledger coalesced() {
        Map<String, Counted> next = new TreeMap<>();
        counters.forEach((field, c) -> {
            if (c.listed().size() <= dev.orderless.apply.internal.CounterBook.PENDING_MAX) {
                next.put(field, c);
                return;
            }
            SortedMap<Long, Run> runs = new TreeMap<>(c.runs());
            SortedMap<Long, Long> listed = new TreeMap<>();
            List<Map.Entry<Long, Long>> group = new ArrayList<>();
            for (Map.Entry<Long, Long> increment : c.listed().entrySet()) {
                if (!group.isEmpty() && increment.getKey() != group.get(group.size() - 1).getKey() + 1) {
                    close(group, runs, listed);
                }
                group.add(increment);
            }
            close(group, runs, listed);
            next.put(field, new Counted(c.folded(), c.upTo(), c.base(), listed, c.asLive(), runs));
        });
        return new Ledger(next, ranked);
    }

    /** Consecutive increments: two or more a run, one listed as it is. */
    private static void close(List<Map.Entry<Long, Long>> group, SortedMap<Long, Run> runs, SortedMap<Long, Long> listed) {
        if (group.size() == 1) {
            listed.put(group.get(0).getKey(), group.get(0).getValue());
        } else if (group.size() > 1) {
            BigInteger sum = group.stream().map(e -> BigInteger.valueOf(e.getValue())).reduce(BigInteger.ZERO,
                    BigInteger::add);
            runs.put(group.get(0).getKey(), new Run(group.get(group.size() - 1).getKey(), sum));
        }
        group.clear();
    }

    /** The entries of {@code bySeq} strictly above {@code seq} (none above the largest seq). */
    private static <V> SortedMap<Long, V> above(SortedMap<Long, V> bySeq, long seq) {
        return seq == Long.MAX_VALUE ? new TreeMap<>() : new TreeMap<>(bySeq.tailMap(seq + 1));
    }

    /** A ranked register's assignment that a later delete could bring back. */
    record Candidate(BsonValue value, long seq) {
    }

    Counted counted(String counter) {
        return counters.getOrDefault(counter, Counted.NONE);
    }

    /** Each counter's value, for those with one. */
    Map<String, BigInteger> values() {
        Map<String, BigInteger> values = new TreeMap<>();
        counters.forEach((field, c) -> {
            if (c.present()) {
                values.put(field, c.value());
            }
        });
        return values;
    }

    /**
     * This ledger after {@code ops}, applied once each in seq order (the first of one seq kept), as the reference
     * model applies them: an increment is listed (unless it is at or below a folded sum: then it is in it), a
     * delete drops the increments below it (and a folded sum it is above) and every candidate, an assignment of a
     * ranked register drops the candidates it outranks or equals and becomes one.
     */
    Ledger after(Collection<? extends Operation> ops, CollectionSchema schema) {
        SortedMap<Long, Operation> bySeq = new TreeMap<>();
        ops.forEach(op -> bySeq.putIfAbsent(op.seq(), op));
        Map<String, Counted> nextCounters = new TreeMap<>(counters);
        Map<String, List<Candidate>> nextRanked = new TreeMap<>();
        ranked.forEach((field, candidates) -> nextRanked.put(field, new ArrayList<>(candidates)));
        for (Operation op : bySeq.values()) {
            if (op instanceof Operation.Increment increment) {
                Counted c = nextCounters.getOrDefault(increment.field(), Counted.NONE);
                if (!c.foldedAt(increment.seq()) && !c.inRun(increment.seq())) {
                    SortedMap<Long, Long> listed = new TreeMap<>(c.listed());
                    listed.putIfAbsent(increment.seq(), increment.delta());
                    nextCounters.put(increment.field(), new Counted(c.folded(), c.upTo(), c.base(), listed,
                            c.asLive(), c.runs()));
                }
            } else if (op instanceof Operation.Assign assign && schema.ranked(assign.field()).isPresent()) {
                RankedField field = schema.ranked(assign.field()).get();
                List<Candidate> candidates = nextRanked.computeIfAbsent(assign.field(), f -> new ArrayList<>());
                int rank = rank(field, assign.value());
                candidates.removeIf(candidate -> rank(field, candidate.value()) <= rank);
                candidates.add(new Candidate(assign.value(), assign.seq()));
            } else if (op instanceof Operation.Delete delete) {
                nextCounters.replaceAll((field, c) -> {
                    // a delete below a fold is the state's own (its increments are above it): a merged one there
                    // is left unjudged (Loaded)
                    boolean folded = c.folded() && c.upTo() > delete.seq();
                    return new Counted(folded, folded ? c.upTo() : 0, folded ? c.base() : BigInteger.ZERO,
                            above(c.listed(), delete.seq()), !folded || c.asLive(), above(c.runs(), delete.seq()));
                });
                nextRanked.clear();
            }
        }
        nextCounters.values().removeIf(c -> !c.present());
        return new Ledger(nextCounters, nextRanked);
    }

    /**
     * This ledger with each counter's increments at or below {@code cuts}' seq for it folded into its sum: what
     * retention keeps of increments whose seqs nothing needs any more. {@code asLive}: the cuts are at or below
     * the live document's own folds ({@link Counted#asLive()}).
     */
    Ledger foldedUpTo(Map<String, Long> cuts, boolean asLive) {
        Map<String, Counted> next = new TreeMap<>(counters);
        cuts.forEach((field, cut) -> {
            Counted c = next.get(field);
            if (c == null) {
                return;
            }
            SortedMap<Long, Long> moved = new TreeMap<>(c.listed());
            moved.keySet().removeAll(above(c.listed(), cut).keySet());
            // a run is folded whole or not at all: one that goes past the cut stays, its seqs known
            SortedMap<Long, Run> movedRuns = new TreeMap<>();
            c.runs().forEach((lo, run) -> {
                if (run.hi() <= cut) {
                    movedRuns.put(lo, run);
                }
            });
            if (moved.isEmpty() && movedRuns.isEmpty()) {
                return;
            }
            BigInteger base = c.folded() ? c.base() : BigInteger.ZERO;
            long upTo = c.upTo();
            for (var entry : moved.entrySet()) {
                base = base.add(BigInteger.valueOf(entry.getValue()));
                upTo = Math.max(upTo, entry.getKey());
            }
            for (Run run : movedRuns.values()) {
                base = base.add(run.sum());
                upTo = Math.max(upTo, run.hi());
            }
            SortedMap<Long, Run> kept = new TreeMap<>(c.runs());
            movedRuns.keySet().forEach(kept::remove);
            next.put(field, new Counted(true, upTo, base, above(c.listed(), cut),
                    (!c.folded() || c.asLive()) && asLive, kept));
        });
        return new Ledger(next, ranked);
    }

    /**
     * This ledger's listed increments and candidates forgotten, its folded sums and runs kept, {@code other}'s folded
     * sum taken instead where it folded up to a higher seq (it then holds those of this one too: both are the live
     * document's compaction, at two times), and {@code other}'s runs joined in: where a merge starts, before the
     * operations are applied again.
     */
    Ledger foldsOnly(Ledger other) {
        Map<String, Counted> next = new TreeMap<>();
        counters.forEach((field, c) -> {
            if (c.folded() || !c.runs().isEmpty()) {   // runs stay: no operation stands for one (standing)
                next.put(field, new Counted(c.folded(), c.upTo(), c.base(), new TreeMap<>(), c.asLive(), c.runs()));
            }
        });
        other.counters.forEach((field, c) -> {
            // at the same seq too: the live document's sum holds what was applied before the history was on
            Counted mine = next.get(field);
            if (c.folded() && (mine == null || !mine.folded() || mine.upTo() <= c.upTo())) {
                // the other's sum holds this one's runs at or below its fold (both are the live document's)
                SortedMap<Long, Run> above = new TreeMap<>(mine == null ? Map.of() : mine.runs());
                above.keySet().removeIf(lo -> lo <= c.upTo());
                next.put(field, new Counted(true, c.upTo(), c.base(), new TreeMap<>(), c.asLive(), above));
            }
        });
        other.counters.forEach((field, c) -> c.runs().forEach((lo, run) -> {
            // the other's runs too (no operation stands for one): both are the live document's, at two times, and its
            // runs only grow, so one of the other's holds whole any of this one's it meets
            Counted mine = next.getOrDefault(field, Counted.NONE);
            if (mine.folded() && lo <= mine.upTo()) {
                return;   // in the sum already
            }
            SortedMap<Long, Run> runs = new TreeMap<>(mine.runs());
            runs.entrySet().removeIf(held -> held.getKey() >= lo && held.getValue().hi() <= run.hi());
            boolean meets = runs.entrySet().stream().anyMatch(held -> held.getKey() <= run.hi()
                    && held.getValue().hi() >= lo);
            if (!meets) {
                runs.put(lo, run);
                next.put(field, new Counted(mine.folded(), mine.upTo(), mine.base(), new TreeMap<>(), mine.asLive(),
                        runs));
            }
        }));
        return new Ledger(next, Map.of());
    }

    /**
     * The operations that stand for this ledger's parts: an increment per listed one and an assignment per candidate,
     * each with its own seq. A fold's sum and a run stand for increments no one operation can: a merge keeps them
     * ({@link #foldsOnly}), a rebuild writes them as they are ({@link dev.orderless.apply.internal.CounterRestore}). A
     * candidate written before orderless (seq 0) has no operation: see {@link #writtenBeforeOrderless()}.
     */
    List<Operation> standing(String entity) {
        List<Operation> ops = new ArrayList<>();
        counters.forEach((field, c) -> c.listed().forEach((seq, delta) -> ops.add(Operation.increment(entity, seq,
                field, delta))));
        ranked.forEach((field, candidates) -> candidates.stream().filter(candidate -> candidate.seq() > 0)
                .forEach(candidate -> ops.add(Operation.assign(entity, candidate.seq(), field, candidate.value()))));
        return ops;
    }

    /**
     * The fold {@code op} falls under, if any: an increment at or below its counter's fold, or a delete below a
     * counter's fold (the live applier refuses both as beyond its horizon, where it folded too).
     */
    Optional<Counted> foldOver(Operation op) {
        if (op instanceof Operation.Increment increment) {
            Counted c = counted(increment.field());
            return c.foldedAt(increment.seq()) ? Optional.of(c) : Optional.empty();
        }
        if (op instanceof Operation.Delete) {
            // below a fold, or at a seq a run counted (a seq collision: the live applier refuses it)
            return counters.values().stream().filter(c -> c.folded() && c.upTo() > op.seq() || c.inRun(op.seq()))
                    .findFirst();
        }
        return Optional.empty();
    }

    /**
     * {@code ranked} with {@code field}'s candidate written before orderless (seq 0), which a merge has no operation
     * for: kept where it is the winner (a later one of a rank as high would have replaced it).
     */
    Ledger withCandidateBeforeOrderless(String field, BsonValue value) {
        Map<String, List<Candidate>> next = new TreeMap<>(ranked);
        List<Candidate> candidates = new ArrayList<>();
        candidates.add(new Candidate(value, 0));
        candidates.addAll(next.getOrDefault(field, List.of()));
        next.put(field, candidates);
        return new Ledger(counters, next);
    }

    /** What no operation can stand for: a counter's sum or a ranked value written before orderless, if any. */
    Optional<String> writtenBeforeOrderless() {
        for (var counter : counters.entrySet()) {
            if (counter.getValue().folded() && counter.getValue().upTo() == 0) {
                return Optional.of("counter '" + counter.getKey() + "' holds " + counter.getValue().base()
                        + " written before orderless");
            }
        }
        for (var register : ranked.entrySet()) {
            if (register.getValue().stream().anyMatch(candidate -> candidate.seq() == 0)) {
                return Optional.of("ranked register '" + register.getKey() + "' holds a value written before"
                        + " orderless");
            }
        }
        return Optional.empty();
    }

    /**
     * True if this ledger accounts for {@code seq}, shown by a live document: a listed increment's, a candidate's,
     * or a folded sum's {@code upTo} (the live document's {@code _incFloor}: the increments below it show nowhere
     * there either).
     */
    boolean accountsFor(long seq) {
        for (Counted c : counters.values()) {
            if (c.listed().containsKey(seq) || c.folded() && c.upTo() == seq || c.inRun(seq)) {
                return true;
            }
        }
        return ranked.values().stream().anyMatch(candidates -> candidates.stream()
                .anyMatch(candidate -> candidate.seq() == seq));
    }

    /** The rank of {@code value} in {@code field}'s order; -1 for a value outside it (one written before orderless). */
    static int rank(RankedField field, BsonValue value) {
        return value.isString() ? field.rank(value.asString().getValue()).orElse(-1) : -1;
    }
}
