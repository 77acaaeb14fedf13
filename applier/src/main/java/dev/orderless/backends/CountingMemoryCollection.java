package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * mongo-java-server's in-memory collection, counting the documents its query path examines: the
 * candidates an index gave, or every document when it scans. That is the figure MongoDB reports as
 * {@code totalDocsExamined} in {@code explain}, for finds, counts, updates and deletes. Change streams and
 * aggregations read the collection by other paths and are not counted.
 */
final class CountingMemoryCollection extends MemoryCollection {
    private final LongAdder examined = new LongAdder();

    CountingMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                             CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
    }

    long documentsExamined() {
        return examined.sum();
    }

    /** The scan: every document is examined. */
    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        examined.add(count());
        return super.matchDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /** An index lookup: only its candidates are examined. */
    @Override
    protected QueryResult matchDocuments(Document query, Iterable<Integer> positions, Document orderBy,
                                         int numberToSkip, int limit, int batchSize, Document fieldSelector) {
        List<Integer> candidates = new ArrayList<>();
        positions.forEach(candidates::add);
        examined.add(candidates.size());
        return super.matchDocuments(query, candidates, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }
}
