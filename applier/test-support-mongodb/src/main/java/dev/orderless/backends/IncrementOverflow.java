package dev.orderless.backends;

import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.ErrorCode;
import de.bwaldvogel.mongo.exception.MongoServerError;
import java.util.List;
import java.util.Map;

/**
 * What MongoDB refuses and mongo-java-server 1.47 wraps: an {@code $inc} whose sum leaves the range of a 64-bit
 * integer. MongoDB fails such an update with BadValue (2), "Failed to apply $inc operations to current value
 * ((NumberLong)...) for document {_id: ...}", and changes nothing; mongo-java-server adds with Java's {@code long}
 * arithmetic and stores the wrapped sum. Checked on the documents an update is about to change, before it changes
 * any: a 32-bit sum past its range becomes a 64-bit integer on both servers, so only a sum involving a 64-bit integer
 * is checked. Paths with the positional {@code $} are resolved as the update resolves them; those with array filters
 * ({@code $[...]}) are not checked (orderless sends none).
 */
final class IncrementOverflow {
    private IncrementOverflow() {
    }

    /**
     * @param matched   the documents the update matched, in its order
     * @param update    the update document ({@code {$inc: {...}, ...}})
     * @param selector  its filter, for the positional {@code $}
     * @param many      whether it updates every matched document or the first
     * @throws MongoServerError BadValue, as MongoDB, if an {@code $inc} would leave the range of a long
     */
    static void refuse(List<Document> matched, Document update, Document selector, boolean many) {
        if (!(update.get("$inc") instanceof Document increments)) {
            return;
        }
        for (Document document : matched) {
            for (Map.Entry<String, Object> increment : increments.entrySet()) {
                check(document, increment.getKey(), increment.getValue(), selector);
            }
            if (!many) {
                return;
            }
        }
    }

    private static void check(Document document, String path, Object delta, Document selector) {
        if (path.contains("$[")) {
            return;
        }
        String resolved = path;
        if (path.contains(".$")) {
            Integer position = new DefaultQueryMatcher().matchPosition(document, selector);
            if (position == null) {
                return;   // the update itself refuses a positional path without a match
            }
            resolved = path.replace(".$", "." + position);
        }
        Object current = Utils.getSubdocumentValueCollectionAware(document, resolved);
        if (!isWhole(current) || !isWhole(delta) || !(current instanceof Long || delta instanceof Long)) {
            return;
        }
        try {
            Math.addExact(((Number) current).longValue(), ((Number) delta).longValue());
        } catch (ArithmeticException e) {
            Object id = document.get("_id");
            throw new MongoServerError(ErrorCode.BadValue, "Failed to apply $inc operations to current value ("
                    + (current instanceof Long ? "(NumberLong)" : "(NumberInt)") + current + ") for document {_id: "
                    + (id instanceof String ? "\"" + id + "\"" : String.valueOf(id)) + "}");
        }
    }

    private static boolean isWhole(Object value) {
        return value instanceof Long || value instanceof Integer;
    }
}
