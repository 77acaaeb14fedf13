package dev.orderless.backends;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import java.util.List;

/**
 * mongo-java-server's in-memory database with two substitutions: each collection counts the documents
 * its queries examine ({@link CountingMemoryCollection}), and each {@code _id} index serves any filter
 * that pins {@code _id} ({@link IdLookupIndex}). Other unique indexes stay mongo-java-server's.
 */
final class IndexedMemoryDatabase extends MemoryDatabase {

    IndexedMemoryDatabase(String databaseName, CursorRegistry cursorRegistry) {
        super(databaseName, cursorRegistry);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        return new CountingMemoryCollection(this, collectionName, options, cursorRegistry);
    }

    @Override
    protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                     boolean sparse) {
        return IdLookupIndex.isIdIndex(keys) && !sparse
                ? new IdLookupIndex(indexName, keys, sparse)
                : super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
    }
}
