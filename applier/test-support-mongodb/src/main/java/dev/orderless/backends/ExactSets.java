package dev.orderless.backends;

import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What MongoDB does and mongo-java-server 1.47 skips: a {@code $set} of a value that equals the stored one as a
 * number but not as BSON. mongo-java-server compares the two as doubles and, finding them equal, leaves the stored
 * value: an Int64 set over an Int32 of the same number stays an Int32 (so does a document holding one), and a
 * Decimal128 set over one within a double's precision of it keeps the old digits. MongoDB stores the value it was
 * given. Planned on the documents an update is about to change (each {@code $set} path, a positional {@code $}
 * resolved as the update resolves it), applied once the update ran: where a path does not hold exactly what was set,
 * it is given it. Paths with array filters ({@code $[...]}) are left (orderless sends none).
 */
final class ExactSets {
    /** The values one document's {@code $set} must leave, by path. */
    private final List<Map.Entry<Document, Map<String, Object>>> planned = new ArrayList<>();

    private ExactSets() {
    }

    /**
     * @param matched  the documents the update matched (the stored documents), in its order
     * @param update   the update document
     * @param selector its filter, for the positional {@code $}
     * @param many     whether it updates every matched document or the first
     */
    static ExactSets plan(List<Document> matched, Document update, Document selector, boolean many) {
        ExactSets sets = new ExactSets();
        if (!(update.get("$set") instanceof Document values)) {
            return sets;
        }
        for (Document document : matched) {
            Map<String, Object> paths = new LinkedHashMap<>();
            Integer position = null;
            for (Map.Entry<String, Object> set : values.entrySet()) {
                String path = set.getKey();
                if (path.contains("$[")) {
                    continue;
                }
                if (path.contains(".$")) {
                    position = position != null ? position : new DefaultQueryMatcher().matchPosition(document, selector);
                    if (position == null) {
                        continue;   // the update itself refuses a positional path without a match
                    }
                    path = path.replace(".$", "." + position);
                }
                paths.put(path, set.getValue());
            }
            sets.planned.add(Map.entry(document, paths));
            if (!many) {
                break;
            }
        }
        return sets;
    }

    /** Gives each planned path the value it was set to, where the update left another. */
    void apply() {
        for (Map.Entry<Document, Map<String, Object>> document : planned) {
            document.getValue().forEach((path, value) -> {
                if (!Objects.equals(Utils.getSubdocumentValue(document.getKey(), path), value)) {
                    Utils.changeSubdocumentValue(document.getKey(), path, value);
                }
            });
        }
    }
}
