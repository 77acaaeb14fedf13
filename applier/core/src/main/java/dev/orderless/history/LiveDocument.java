package dev.orderless.history;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.CounterValues;
import dev.orderless.apply.SetField;
import dev.orderless.apply.StoredFields;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What a live entity document shows of the operations applied to it: the seq of every surviving effect (each
 * register's last assignment, each live element and tombstone, each counter's increments not folded and the seq
 * up to which compaction folded them, the two ends of each run they were coalesced into, each ranked register's candidates, the last delete's {@code _floor}, and the
 * {@code _gcFloor} compaction left), each with where it shows. The highest of them is the highest seq ever
 * applied to the document: an applied operation's effect is overwritten only by one with a higher seq.
 */
final class LiveDocument {
    private LiveDocument() {
    }

    /** Seq to where the document shows it (the first place found), in seq order. */
    static Map<Long, String> seqs(BsonDocument doc, CollectionSchema schema) {
        Map<Long, String> seqs = new TreeMap<>();
        put(seqs, number(doc.get(StoredFields.FLOOR)), StoredFields.FLOOR);
        put(seqs, number(doc.get(StoredFields.GC_FLOOR)), StoredFields.GC_FLOOR);
        if (doc.isDocument(StoredFields.REGISTER_SEQS)) {
            BsonDocument registers = doc.getDocument(StoredFields.REGISTER_SEQS);
            for (String register : schema.registers()) {
                put(seqs, number(registers.get(register)), "register '" + register + "'");
            }
            schema.ranked().forEach(ranked -> put(seqs, number(registers.get(ranked.field())),
                    "ranked register '" + ranked.field() + "'"));
        }
        for (String counter : schema.counters()) {
            put(seqs, incrementFloors(doc).getOrDefault(counter, 0L), "the increments of counter '" + counter
                    + "' compaction folded");
            runs(doc, counter).forEach((lo, run) -> {
                put(seqs, lo, "the increments of counter '" + counter + "' coalesced into a run");
                put(seqs, run.hi(), "the increments of counter '" + counter + "' coalesced into a run");
            });
            increments(doc, counter).forEach((seq, delta) -> put(seqs, seq, "an increment of counter '" + counter
                    + "'"));
        }
        schema.ranked().forEach(ranked -> candidates(doc, ranked.field()).forEach(candidate -> put(seqs,
                candidate.seq(), "an assignment of ranked register '" + ranked.field() + "'")));
        for (SetField set : schema.sets()) {
            entries(seqs, doc, set, set.field(), "element");
            entries(seqs, doc, set, set.tombstones(), "tombstone");
        }
        return seqs;
    }

    /** The highest seq {@code doc} shows; 0 if none. */
    static long horizon(Map<Long, String> seqs) {
        return seqs.isEmpty() ? 0 : ((TreeMap<Long, String>) seqs).lastKey();
    }

    /**
     * What {@code doc} keeps of its counters and ranked registers, as a {@link Ledger}: a counter's increments not
     * folded are listed (those pushed one by one) or its runs (those coalesced), those compaction folded (up to its
     * {@code _incFloor}, above the floor) are its sum; a value
     * no increment accounts for was written before orderless (a sum up to seq 0). A ranked register's candidates are
     * its {@code _ranked} entries, or its value (at its seq, 0 if none) if it has none.
     */
    static Ledger ledger(BsonDocument doc, CollectionSchema schema) {
        long floor = number(doc.get(StoredFields.FLOOR));
        Map<String, Long> incFloors = incrementFloors(doc);
        Map<String, Ledger.Counted> counters = new TreeMap<>();
        for (String counter : schema.counters()) {
            java.util.Optional<BigInteger> value = CounterValues.read(doc.get(counter));
            java.util.SortedMap<Long, Long> listed = increments(doc, counter);
            java.util.SortedMap<Long, Ledger.Run> runs = runs(doc, counter);
            BigInteger sum = listed.values().stream().map(BigInteger::valueOf).reduce(BigInteger.ZERO, BigInteger::add)
                    .add(runs.values().stream().map(Ledger.Run::sum).reduce(BigInteger.ZERO, BigInteger::add));
            long upTo = incFloors.getOrDefault(counter, 0L);
            boolean recorded = !listed.isEmpty() || !runs.isEmpty();
            if (upTo > floor && value.isPresent()) {
                counters.put(counter, new Ledger.Counted(true, upTo, value.get().subtract(sum), listed, true, runs));
            } else if (value.isPresent() && (!recorded || !value.get().equals(sum))) {
                counters.put(counter, new Ledger.Counted(true, 0, value.get().subtract(sum), listed, true, runs));
            } else if (recorded) {
                counters.put(counter, new Ledger.Counted(false, 0, BigInteger.ZERO, listed, true, runs));
            }
        }
        Map<String, List<Ledger.Candidate>> ranked = new TreeMap<>();
        schema.ranked().forEach(field -> {
            List<Ledger.Candidate> candidates = candidates(doc, field.field());
            if (candidates.isEmpty() && doc.containsKey(field.field())) {
                BsonValue seqs = doc.get(StoredFields.REGISTER_SEQS);
                candidates = List.of(new Ledger.Candidate(doc.get(field.field()), seqs != null && seqs.isDocument()
                        ? number(seqs.asDocument().get(field.field())) : 0));
            }
            ranked.put(field.field(), candidates);
        });
        return new Ledger(counters, ranked);
    }

    /** Each counter's {@code _incFloor}: the seq up to which compaction folded its increments into its value. */
    static Map<String, Long> incrementFloors(BsonDocument doc) {
        Map<String, Long> floors = new TreeMap<>();
        BsonValue stored = doc.get(StoredFields.INCREMENT_FLOOR);
        if (stored != null && stored.isDocument()) {
            stored.asDocument().forEach((counter, seq) -> {
                if (number(seq) > 0) {
                    floors.put(counter, number(seq));
                }
            });
        }
        return floors;
    }

    /** Counter {@code counter}'s runs ({@code _incRuns}): lowest seq to the run. */
    static java.util.SortedMap<Long, Ledger.Run> runs(BsonDocument doc, String counter) {
        java.util.SortedMap<Long, Ledger.Run> runs = new TreeMap<>();
        for (BsonValue run : entries(doc, StoredFields.INCREMENT_RUNS, counter)) {
            if (run.isDocument() && number(run.asDocument().get(StoredFields.ENTRY_SEQ)) > 0) {
                BsonDocument entry = run.asDocument();
                runs.putIfAbsent(number(entry.get(StoredFields.ENTRY_SEQ)), new Ledger.Run(
                        number(entry.get(StoredFields.ENTRY_HI)), CounterValues.read(entry.get(StoredFields.ENTRY_DELTA))
                        .orElse(BigInteger.ZERO)));
            }
        }
        return runs;
    }

    private static BsonArray entries(BsonDocument doc, String bookkeeping, String counter) {
        BsonValue all = doc.get(bookkeeping);
        BsonValue entries = all != null && all.isDocument() ? all.asDocument().get(counter) : null;
        return entries != null && entries.isArray() ? entries.asArray() : new BsonArray();
    }

    private static java.util.SortedMap<Long, Long> increments(BsonDocument doc, String counter) {
        java.util.SortedMap<Long, Long> listed = new TreeMap<>();
        BsonArray entries = entries(doc, StoredFields.INCREMENTS, counter);
        if (!entries.isEmpty()) {
            for (BsonValue entry : entries) {
                if (entry.isDocument() && number(entry.asDocument().get(StoredFields.ENTRY_SEQ)) > 0) {
                    listed.putIfAbsent(number(entry.asDocument().get(StoredFields.ENTRY_SEQ)),
                            number(entry.asDocument().get(StoredFields.ENTRY_DELTA)));
                }
            }
        }
        return listed;
    }

    private static List<Ledger.Candidate> candidates(BsonDocument doc, String register) {
        List<Ledger.Candidate> candidates = new java.util.ArrayList<>();
        BsonValue all = doc.get(StoredFields.RANKED);
        BsonValue entries = all != null && all.isDocument() ? all.asDocument().get(register) : null;
        if (entries != null && entries.isArray()) {
            for (BsonValue entry : entries.asArray()) {
                if (entry.isDocument() && entry.asDocument().containsKey(StoredFields.ENTRY_VALUE)) {
                    candidates.add(new Ledger.Candidate(entry.asDocument().get(StoredFields.ENTRY_VALUE),
                            number(entry.asDocument().get(StoredFields.ENTRY_SEQ))));
                }
            }
        }
        return candidates;
    }

    static long gcFloor(BsonDocument doc) {
        return number(doc.get(StoredFields.GC_FLOOR));
    }

    static long version(BsonDocument doc) {
        return number(doc.get(StoredFields.VERSION));
    }

    private static void entries(Map<Long, String> seqs, BsonDocument doc, SetField set, String array, String what) {
        BsonValue entries = doc.get(array);
        if (entries == null || !entries.isArray()) {
            return;
        }
        for (BsonValue entry : entries.asArray()) {
            if (entry.isDocument()) {
                BsonValue key = entry.asDocument().get(set.key());
                put(seqs, number(entry.asDocument().get(StoredFields.ENTRY_SEQ)), what + " " + (key != null && key.isString()
                        ? "'" + key.asString().getValue() + "'" : String.valueOf(key)) + " of '" + set.field() + "'");
            }
        }
    }

    private static void put(Map<Long, String> seqs, long seq, String where) {
        if (seq > 0) {
            seqs.putIfAbsent(seq, where);
        }
    }

    private static long number(BsonValue v) {
        return v != null && v.isNumber() ? v.asNumber().longValue() : 0L;
    }
}
