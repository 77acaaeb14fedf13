package dev.orderless.backends;

import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code _id} index of the embedded server, able to answer any filter that pins {@code _id}, as
 * MongoDB's does. mongo-java-server 1.47's unique index takes a query only when the query's keys are
 * exactly the index's keys ({@code AbstractUniqueIndex.canHandle}), so {@code {_id: x, _v: 3}} or
 * {@code {$and: [{_id: x}, ...]}} (every guarded filter) falls through to a scan of the whole collection.
 *
 * <p>The lookup:
 * <ol>
 *   <li>Find an {@code _id} condition the whole filter implies: {@code _id} at the top level, or in an
 *       element of a top-level {@code $and} (searched depth first), that is a plain value, {@code {$eq: v}}
 *       or {@code {$in: [v, ...]}} with plain values (not null, a regular expression, a document or an
 *       array, which this index does not look up exactly; those are left to the scan).
 *   <li>Hand that condition alone, {@code {_id: condition}}, to mongo-java-server's own index, which
 *       finds its positions as for a plain {@code _id} query.
 *   <li>The collection then matches the whole filter on those candidates (and, when there are none,
 *       on an empty document, so that a malformed filter is still refused).
 * </ol>
 * Every document the whole filter matches satisfies its {@code _id} conjunct, so it is among the
 * candidates: the results are those of the plain {@code _id} query narrowed by the rest of the filter,
 * never fewer. Conditions under {@code $or}, {@code $nor} or {@code $not} are not implied and are left to
 * the scan. A query that is {@code _id} alone is mongo-java-server's own case and is handled as before.
 */
final class IdLookupIndex extends MemoryUniqueIndex {
    static final String ID = "_id";

    IdLookupIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
    }

    /** Whether this is the {@code _id} index this class is for (a single ascending or descending key). */
    static boolean isIdIndex(List<IndexKey> keys) {
        return keys.size() == 1 && ID.equals(keys.get(0).getKey());
    }

    @Override
    public boolean canHandle(Document query) {
        return lookup(query).isPresent();
    }

    @Override
    public Iterable<Integer> getPositions(Document query) {
        Document alone = lookup(query).orElseThrow(() ->
                new IllegalStateException("no _id condition the _id index can serve in " + query));
        if (alone.get(ID) instanceof String id) {
            // the common case, an entity id: a string is its own index key (mongo-java-server normalises
            // only numbers, documents and arrays), so skip the general path and its per-call streams
            Integer position = getPosition(new KeyValue(id));
            return position == null ? List.of() : List.of(position);
        }
        return super.getPositions(alone);
    }

    /**
     * {@code {_id: condition}} for an {@code _id} condition that {@code query} implies and the index serves:
     * mongo-java-server's own case (the query is {@code _id} alone) exactly as before; otherwise only a
     * plain value or an {@code $in} of plain values, whose index lookup finds every match. Anything
     * else (regular expressions, documents, arrays, null), whose lookup by this index is not exact, is
     * left to the scan.
     */
    private Optional<Document> lookup(Document query) {
        // implied first: for a plain value it gives what mongo-java-server's own case would, without the
        // streams super.canHandle builds on every call (reads by _id are on the hot path)
        Optional<Document> implied = implied(query);
        if (implied.isPresent() || query.size() != 1 || !query.containsKey(ID)) {
            return implied;
        }
        return super.canHandle(query) ? Optional.of(query) : Optional.empty();
    }

    private static Optional<Document> implied(Document query) {
        if (query.containsKey(ID)) {
            Object condition = query.get(ID);
            if (condition instanceof Document operators && operators.size() == 1
                    && (operators.containsKey("$eq") || operators.containsKey("$in"))) {
                Object operand = operators.values().iterator().next();
                if (operators.containsKey("$eq") && isPlain(operand)) {
                    return Optional.of(new Document(ID, operand));
                }
                if (operand instanceof Collection<?> values && values.stream().allMatch(IdLookupIndex::isPlain)) {
                    return Optional.of(new Document(ID, operators));
                }
            } else if (isPlain(condition)) {
                return Optional.of(new Document(ID, condition));
            }
        }
        if (query.get("$and") instanceof List<?> conjuncts) {
            for (Object conjunct : conjuncts) {
                if (conjunct instanceof Document clause) {
                    Optional<Document> found = implied(clause);
                    if (found.isPresent()) {
                        return found;
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** A value the index finds exactly: not null, a regular expression, a document or an array. */
    private static boolean isPlain(Object value) {
        return value != null && !(value instanceof Map<?, ?>) && !(value instanceof Collection<?>)
                && !BsonRegularExpression.isRegularExpression(value);
    }
}
