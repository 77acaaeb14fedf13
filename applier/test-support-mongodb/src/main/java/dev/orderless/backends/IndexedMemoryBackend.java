package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;

/**
 * mongo-java-server's in-memory backend whose databases are {@link IndexedMemoryDatabase}s: filters that
 * pin {@code _id} are served from the {@code _id} index, as on MongoDB, and the documents examined are
 * counted per collection. The hook is the chain backend → database → collection and index through
 * mongo-java-server's protected factory methods; {@code EmbeddedMongoTest} fails if an upgrade breaks it.
 */
final class IndexedMemoryBackend extends MemoryBackend {

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new IndexedMemoryDatabase(databaseName, getCursorRegistry());
    }

    /** Documents examined by queries on {@code database.collection} since it was created; 0 if it does not exist. */
    long documentsExamined(String database, String collection) {
        if (!listDatabaseNames().contains(database)) {
            return 0;   // resolving it would create it
        }
        MongoCollection<?> found = resolveDatabase(database).resolveCollection(collection, false);
        return found instanceof CountingMemoryCollection counting ? counting.documentsExamined() : 0;
    }
}
