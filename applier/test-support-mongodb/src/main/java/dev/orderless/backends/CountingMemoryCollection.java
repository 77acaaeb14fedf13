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
 * candidates an index gave, or every document when it scans (even where a limit stops the scan early).
 * For finds, updates and deletes that is the figure MongoDB reports as {@code totalDocsExamined} in
 * {@code explain}. mongo-java-server's aggregations (the driver's {@code countDocuments} among them) read
 * the whole collection through the same path, and count as scans; a change stream's update lookup
 * ({@link IndexedOplog}) goes through the {@code _id} index and counts one.
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
        if (candidates.isEmpty()) {
            // a scan would have matched the filter against some document, and refused a malformed one
            // ("unknown top level operator"); with no candidate, match it against an empty one instead
            documentMatchesQuery(new Document(), query);
        }
        return super.matchDocuments(query, candidates, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }
}
