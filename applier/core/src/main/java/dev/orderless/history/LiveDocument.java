package dev.orderless.history;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.SetField;
import dev.orderless.apply.StoredFields;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What a live entity document shows of the operations applied to it: the seq of every surviving effect (each
 * register's last assignment, each live element and tombstone, the last delete's {@code _floor}, and the
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
        }
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
