package dev.orderless.apply;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The elements of a stored document that break the invariant "an element appears at most once across its live
 * array and its tombstone array": nothing orderless writes does it, but a write from outside (a script, a
 * restore merged by hand) or a server that returned a document that never existed can. Such an element is read
 * as its entry with the highest seq ({@link EntityState#of}, {@link Stored#entry}); this names them, for the
 * ERROR line and the {@code orderless.apply.invariant.broken} count. A pure reading, with no backend.
 */
final class DuplicateEntries {
    private DuplicateEntries() {
    }

    /** One element with more than one entry: the set field, the element, and the seqs of its entries. */
    record Duplicate(String field, String element, List<Long> seqs) {
        @Override
        public String toString() {
            return field + " '" + element + "' (" + seqs.size() + " entries, seqs " + seqs + ")";
        }
    }

    /** Every element of {@code doc} that has more than one entry, by set field then element. */
    static List<Duplicate> in(BsonDocument doc, CollectionSchema schema) {
        List<Duplicate> found = new ArrayList<>();
        for (SetField set : schema.sets()) {
            Map<String, List<Long>> seqs = new LinkedHashMap<>();
            for (String array : List.of(set.field(), set.tombstones())) {
                for (BsonValue value : Stored.array(doc, array)) {
                    if (value.isDocument() && value.asDocument().get(set.key()) instanceof org.bson.BsonString key) {
                        seqs.computeIfAbsent(key.getValue(), k -> new ArrayList<>()).add(Stored.seqOf(value.asDocument()));
                    }
                }
            }
            seqs.forEach((element, of) -> {
                if (of.size() > 1) {
                    found.add(new Duplicate(set.field(), element, of.stream().sorted(java.util.Comparator.reverseOrder()).toList()));
                }
            });
        }
        return found;
    }

    /** The ERROR line for {@code duplicates} of {@code entity} in {@code collection}. */
    static String describe(String collection, String entity, List<Duplicate> duplicates) {
        return collection + " '" + entity + "' holds more than one entry for " + duplicates
                + ": each is read as its highest seq; nothing orderless writes does this, so look for a write from"
                + " outside orderless (a script, a hand-merged restore) or a server that returned a document that"
                + " never existed";
    }
}
