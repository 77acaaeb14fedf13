package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * mongo-java-server's in-memory collection, with reads that return snapshots ({@link SnapshotMemoryCollection}),
 * counting the documents its query path examines: the
 * candidates an index gave, or every document when it scans (even where a limit stops the scan early).
 * For finds, updates and deletes that is the figure MongoDB reports as {@code totalDocsExamined} in
 * {@code explain}. mongo-java-server's aggregations (the driver's {@code countDocuments} among them) read
 * the whole collection through the same path, and count as scans; a change stream's update lookup
 * ({@link IndexedOplog}) goes through the {@code _id} index and counts one.
 *
 * <p>And it keeps no running data size: mongo-java-server encodes the old and the new document to BSON on
 * every update (and each document on insert and delete) only to keep {@code collStats}' {@code size}
 * current: about a sixth of the server's time for a write to a view document of a thousand entries.
 * {@link #getDataSize} computes the same figure when {@code collStats} or {@code validate} asks.
 */
final class CountingMemoryCollection extends SnapshotMemoryCollection {
    private final LongAdder examined = new LongAdder();

    CountingMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                             CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
    }

    @Override
    protected boolean tracksDataSize() {
        return false;
    }

    /** The BSON size of every document, as mongo-java-server would have kept it, computed under the collection's lock. */
    @Override
    protected synchronized int getDataSize() {
        return streamAllDocumentsWithPosition().mapToInt(stored -> bsonSize(stored.getDocument())).sum();
    }

    private static int bsonSize(Document document) {
        ByteBuf buffer = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(document, buffer);
            return buffer.writerIndex();
        } finally {
            buffer.release();
        }
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
