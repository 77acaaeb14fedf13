package dev.orderless.apply;

import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** Reads orderless' fields out of a stored entity document; a missing number counts as 0. */
final class Stored {
    private Stored() {
    }

    static long floor(BsonDocument doc) {
        return number(doc, StoredFields.FLOOR);
    }

    static long gcFloor(BsonDocument doc) {
        return number(doc, StoredFields.GC_FLOOR);
    }

    /** The document version, or null if the document has none (written by something else). */
    static Long version(BsonDocument doc) {
        BsonValue v = doc.get(StoredFields.VERSION);
        return v != null && v.isNumber() ? v.asNumber().longValue() : null;
    }

    static long seqOf(BsonDocument entry) {
        return number(entry, StoredFields.ENTRY_SEQ);
    }

    /**
     * True if MongoDB's {@code {seq: {$gte: seq}}} matches this entry: a number (of any BSON numeric type)
     * at or above {@code seq}, or an array holding one. Anything else (missing, a string, NaN) does not,
     * so {@code $not $gte} pulls it; {@link DeletePlan} must kill exactly what the server pulls.
     */
    static boolean seqAtLeast(BsonDocument entry, long seq) {
        BsonValue v = entry.get(StoredFields.ENTRY_SEQ);
        if (v != null && v.isArray()) {
            return v.asArray().stream().anyMatch(e -> numberAtLeast(e, seq));
        }
        return numberAtLeast(v, seq);
    }

    private static boolean numberAtLeast(BsonValue v, long seq) {
        if (v == null) {
            return false;
        }
        return switch (v.getBsonType()) {
            case INT32, INT64 -> v.asNumber().longValue() >= seq;
            case DOUBLE -> {
                // exactly, as MongoDB compares a double with a long (past 2^53 a cast would round)
                double d = v.asDouble().getValue();
                yield Double.isNaN(d) ? false : Double.isInfinite(d) ? d > 0
                        : new java.math.BigDecimal(d).compareTo(java.math.BigDecimal.valueOf(seq)) >= 0;
            }
            case DECIMAL128 -> {
                org.bson.types.Decimal128 d = v.asDecimal128().getValue();
                // seqs are positive: any negative value (-0 included, which BigDecimal refuses) is below
                yield !d.isNaN() && !d.isNegative() && (d.isInfinite()
                        || d.bigDecimalValue().compareTo(java.math.BigDecimal.valueOf(seq)) >= 0);
            }
            default -> false;
        };
    }

    /** The seq of the register's last assignment, or 0. */
    static long registerSeq(BsonDocument doc, String field) {
        BsonValue seqs = doc.get(StoredFields.REGISTER_SEQS);
        return seqs != null && seqs.isDocument() ? number(seqs.asDocument(), field) : 0L;
    }

    /**
     * The outcome of an operation at or below the document's floor, if it is: a delete already took it away
     * (superseded), or, at the floor itself, the delete holds its seq (a seq collision). Empty above the floor.
     */
    static Optional<Outcome> atOrBelowFloor(BsonDocument doc, long seq) {
        long floor = floor(doc);
        return seq > floor ? Optional.empty() : Optional.of(seq == floor ? Outcome.SEQ_COLLISION : Outcome.SUPERSEDED);
    }

    /** The highest seq compaction folded into counter {@code field}'s value, or 0. */
    static long incrementFloor(BsonDocument doc, String field) {
        BsonValue floors = doc.get(StoredFields.INCREMENT_FLOOR);
        return floors != null && floors.isDocument() ? number(floors.asDocument(), field) : 0L;
    }

    /** The entries of array {@code field}; empty if missing or not an array. */
    static BsonArray array(BsonDocument doc, String field) {
        BsonValue value = doc.get(field);
        return value != null && value.isArray() ? value.asArray() : new BsonArray();
    }

    /**
     * The entry whose key is {@code element} in array {@code field}; of several (an invariant broken from outside,
     * see {@link DuplicateEntries}), the one with the highest seq.
     */
    static Optional<BsonDocument> entry(BsonDocument doc, String field, String key, String element) {
        BsonDocument found = null;
        for (BsonValue value : array(doc, field)) {
            if (value.isDocument()) {
                BsonValue k = value.asDocument().get(key);
                if (k != null && k.isString() && k.asString().getValue().equals(element)
                        && (found == null || seqOf(value.asDocument()) > seqOf(found))) {
                    found = value.asDocument();
                }
            }
        }
        return Optional.ofNullable(found);
    }

    /** An entry's attributes: everything but its key, seq and timestamp. */
    static BsonDocument attrsOf(BsonDocument entry, String key) {
        BsonDocument attrs = new BsonDocument();
        for (var e : entry.entrySet()) {
            String name = e.getKey();
            if (!name.equals(key) && !StoredFields.RESERVED_IN_ENTRY.contains(name)) {
                attrs.put(name, e.getValue());
            }
        }
        return attrs;
    }

    private static long number(BsonDocument doc, String field) {
        BsonValue v = doc.get(field);
        return v != null && v.isNumber() ? v.asNumber().longValue() : 0L;
    }
}
