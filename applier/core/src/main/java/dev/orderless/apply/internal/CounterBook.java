package dev.orderless.apply.internal;

import dev.orderless.apply.CounterValues;
import dev.orderless.apply.StoredFields;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;

/**
 * What a counter's document keeps of the increments it counted, not yet folded by compaction: a pure reading of
 * one document, with no backend.
 *
 * <ul>
 *   <li>{@code _inc.<field>}: increments pushed one by one by the blind write, {@code {seq, d, at}}, at most
 *       {@link #PENDING_MAX}: the blind write is guarded on there being room, so the array stays small whatever
 *       the rate of increments.
 *   <li>{@code _incRuns.<field>}: runs, {@code {seq: lo, hi, d: sum, at: newest}}: every seq from {@code lo} to
 *       {@code hi} was an increment of this counter, counted once, their deltas summing to {@code d} (a 64-bit
 *       integer, or a {@code Decimal128} past one, as {@link CounterValues#stored}). When the pending array is full,
 *       the next increment reads the document and coalesces it: pending entries and runs merge into maximal runs of
 *       consecutive seqs, in one compare-and-set. A counter whose entity's seqs are consecutive (a stamper per
 *       entity) keeps one run however many increments it counted; what remains is one run per gap: a seq that is
 *       another field's operation, or an increment not delivered yet.
 * </ul>
 * A run never holds a delete's seq (that seq is the delete's, not an increment's), so a late delete keeps exactly
 * the runs and entries above it, and their sum is the counter's value after it. Within a run, the delta of one seq
 * is no longer known: the same seq delivered again is a duplicate, and a different operation claiming it (a seq
 * collision) can no longer be told from one.
 *
 * @param pending the entries of {@code _inc.<field>}, as stored
 * @param runs    the entries of {@code _incRuns.<field>}, as stored
 */
public record CounterBook(List<Span> pending, List<Span> runs) {
    /**
     * The most increments the blind write pushes before the next one coalesces them into runs: 250 entries (about
     * 12 KB, a document MongoDB rewrites on every increment), one read and compare-and-set every 250 increments (a
     * batch's other increments of the counter go blind behind it, in the same command: {@link BatchApply}).
     */
    public static final int PENDING_MAX = 250;

    /**
     * Consecutive seqs counted as one: {@code lo} to {@code hi}, their deltas summing to {@code sum}, the newest
     * counted at {@code atMillis}. A pending entry is a span of one seq.
     */
    public record Span(long lo, long hi, BigInteger sum, long atMillis) {
        public boolean holds(long seq) {
            return lo <= seq && seq <= hi;
        }

        public BsonDocument toRun() {
            return new BsonDocument(StoredFields.ENTRY_SEQ, new BsonInt64(lo))
                    .append(StoredFields.ENTRY_HI, new BsonInt64(hi))
                    .append(StoredFields.ENTRY_DELTA, CounterValues.stored(sum))
                    .append(StoredFields.ENTRY_AT, new BsonDateTime(atMillis));
        }
    }

    public static CounterBook of(BsonDocument doc, String field) {
        return new CounterBook(spans(doc, StoredFields.INCREMENTS, field), spans(doc, StoredFields.INCREMENT_RUNS,
                field));
    }

    /** The pending entry with this very seq, or the run holding it. */
    public Optional<Span> holding(long seq) {
        return all().stream().filter(span -> span.holds(seq)).findFirst();
    }

    /** True if the pending entry with this seq records exactly this delta (a pending entry knows its own). */
    public boolean pendingWith(long seq, long delta) {
        return pending.stream().anyMatch(span -> span.lo() == seq && span.sum().equals(BigInteger.valueOf(delta)));
    }

    /** True if the blind write finds no room (see {@link #PENDING_MAX}). */
    public boolean pendingFull() {
        return pending.size() >= PENDING_MAX;
    }

    /** Every span, pending and run, by {@code lo}. */
    public List<Span> all() {
        List<Span> all = new ArrayList<>(pending);
        all.addAll(runs);
        all.sort(Comparator.comparingLong(Span::lo));
        return all;
    }

    /** True if the counter keeps anything. */
    public boolean isEmpty() {
        return pending.isEmpty() && runs.isEmpty();
    }

    /** The sum of every span. */
    public BigInteger sum() {
        return all().stream().map(Span::sum).reduce(BigInteger.ZERO, BigInteger::add);
    }

    /**
     * {@code spans} merged into maximal runs of consecutive seqs (overlaps, which orderless never writes, are kept
     * apart rather than guessed at), as {@code _incRuns} entries.
     */
    public static BsonArray coalesced(List<Span> spans) {
        List<Span> sorted = new ArrayList<>(spans);
        sorted.sort(Comparator.comparingLong(Span::lo));
        BsonArray runs = new BsonArray();
        Span open = null;
        for (Span span : sorted) {
            if (open != null && open.hi() != Long.MAX_VALUE && span.lo() == open.hi() + 1) {
                open = new Span(open.lo(), span.hi(), open.sum().add(span.sum()), Math.max(open.atMillis(),
                        span.atMillis()));
                continue;
            }
            if (open != null) {
                runs.add(open.toRun());
            }
            open = span;
        }
        if (open != null) {
            runs.add(open.toRun());
        }
        return runs;
    }

    private static List<Span> spans(BsonDocument doc, String bookkeeping, String field) {
        BsonValue all = doc.get(bookkeeping);
        BsonValue entries = all != null && all.isDocument() ? all.asDocument().get(field) : null;
        List<Span> spans = new ArrayList<>();
        if (entries == null || !entries.isArray()) {
            return spans;
        }
        for (BsonValue value : entries.asArray()) {
            if (!value.isDocument()) {
                continue;
            }
            BsonDocument entry = value.asDocument();
            long lo = number(entry.get(StoredFields.ENTRY_SEQ));
            BsonValue hi = entry.get(StoredFields.ENTRY_HI);
            BsonValue at = entry.get(StoredFields.ENTRY_AT);
            spans.add(new Span(lo, hi != null && hi.isNumber() ? hi.asNumber().longValue() : lo,
                    CounterValues.read(entry.get(StoredFields.ENTRY_DELTA)).orElse(BigInteger.ZERO),
                    at != null && at.isDateTime() ? at.asDateTime().getValue() : 0L));
        }
        return spans;
    }

    private static long number(BsonValue value) {
        return value != null && value.isNumber() ? value.asNumber().longValue() : 0L;
    }
}
