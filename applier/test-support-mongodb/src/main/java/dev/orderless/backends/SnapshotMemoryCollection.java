package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import java.util.ArrayList;
import java.util.List;

/**
 * mongo-java-server's in-memory collection whose reads return snapshots, as MongoDB's do: a reader gets one
 * whole version of each document, never a document that never existed.
 *
 * <p>What it mends: mongo-java-server 1.47 matches a query under the collection's lock but returns the stored
 * documents themselves, and its wire handler encodes the reply after the lock is released; an update writes its
 * new version into the stored document one field at a time. So a find beside an update could send the early
 * fields of one version and the later ones of the next (the two rare CI failures of the concurrent property
 * tests, {@code TornReadsTest}), or fail to encode when the update added a field. Here:
 * <ol>
 *   <li>Every result a query hands out is copied while the lock is held: a find's first batch, the rest that
 *       its cursor keeps for later batches, an aggregation's input, a count's matches, and the document a
 *       findAndModify returns.
 *   <li>A query that the collection's own write path runs (an update's, a delete's, a findAndModify's) still
 *       gets the stored documents, which that write then changes in place.
 * </ol>
 * And it refuses an {@code $inc} past the range of a 64-bit integer, as MongoDB does ({@link IncrementOverflow}):
 * mongo-java-server would store the wrapped sum; and a {@code $set} stores exactly the value it was given
 * ({@link ExactSets}): mongo-java-server skipped one equal to the stored value as a double (an Int64 over an Int32, a
 * Decimal128 within a double's precision).
 *
 * <p>A copy is deep: a read's result is its own, whatever a later stage does with it (mongo-java-server's
 * {@code $addFields} writes into an embedded document of its input, which a shallow copy would share with the
 * stored document).
 */
class SnapshotMemoryCollection extends MemoryCollection {
    /** True while this collection's own write path runs its queries; guarded by the collection's lock. */
    private boolean writing;
    /**
     * The update running now, whose {@code $inc} is checked on what it matched ({@link IncrementOverflow}) and whose
     * {@code $set} is made exact ({@link ExactSets}); null otherwise.
     */
    private Document updating;
    private Document updatingSelector;
    private boolean updatingMany;
    private ExactSets exactSets;

    SnapshotMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                             CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
    }

    @Override
    protected QueryResult createQueryResult(List<Document> matchedDocuments, int batchSize) {
        if (writing) {
            if (updating != null) {
                IncrementOverflow.refuse(matchedDocuments, updating, updatingSelector, updatingMany);
                exactSets = ExactSets.plan(matchedDocuments, updating, updatingSelector, updatingMany);
            }
            return super.createQueryResult(matchedDocuments, batchSize);
        }
        List<Document> snapshots = new ArrayList<>(matchedDocuments.size());
        matchedDocuments.forEach(document -> snapshots.add(document.cloneDeeply()));
        return super.createQueryResult(snapshots, batchSize);
    }

    @Override
    public synchronized Document updateDocuments(Document selector, Document updateQuery, ArrayFilters arrayFilters,
                                                 boolean isMulti, boolean isUpsert, Oplog oplog) {
        writing = true;
        updating = updateQuery;
        updatingSelector = selector;
        updatingMany = isMulti;
        try {
            Document result = super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog);
            if (exactSets != null) {
                exactSets.apply();
            }
            return result;
        } finally {
            writing = false;
            updating = null;
            exactSets = null;
        }
    }

    @Override
    public synchronized int deleteDocuments(Document selector, int limit, Oplog oplog) {
        writing = true;
        try {
            return super.deleteDocuments(selector, limit, oplog);
        } finally {
            writing = false;
        }
    }

    /** The returned {@code value} is the stored document itself when the command asks for the new version. */
    @Override
    public synchronized Document findAndModify(Document query) {
        Document result;
        writing = true;
        if (query.get("update") instanceof Document update && query.get("query") instanceof Document selector) {
            updating = update;
            updatingSelector = selector;
            updatingMany = false;
        }
        try {
            result = super.findAndModify(query);
            if (exactSets != null) {
                exactSets.apply();
            }
        } finally {
            writing = false;
            updating = null;
            exactSets = null;
        }
        if (result.get("value") instanceof Document value) {
            result.put("value", value.cloneDeeply());
        }
        return result;
    }

    /** Under the lock, as every other read is (mongo-java-server counts matches without it). */
    @Override
    public synchronized int count(Document query, int skip, int limit) {
        return super.count(query, skip, limit);
    }
}
