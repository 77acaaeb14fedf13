package dev.orderless.backends;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;
import java.util.List;

/**
 * mongo-java-server's in-memory database with two substitutions: each collection counts the documents
 * its queries examine ({@link CountingMemoryCollection}), and each {@code _id} index serves any filter
 * that pins {@code _id} ({@link IdLookupIndex}). Other unique indexes stay mongo-java-server's. And
 * {@code listCollections} reports each collection's uuid in {@code info.uuid}, as MongoDB does, so that a
 * dropped and recreated collection can be told from the old one.
 */
final class IndexedMemoryDatabase extends MemoryDatabase {

    IndexedMemoryDatabase(String databaseName, CursorRegistry cursorRegistry) {
        super(databaseName, cursorRegistry);
    }

    @Override
    public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver databaseResolver,
                                  Oplog oplog) {
        Document response = super.handleCommand(channel, command, query, databaseResolver, oplog);
        if (command.equalsIgnoreCase("listCollections") && response.get("cursor") instanceof Document cursor
                && cursor.get("firstBatch") instanceof List<?> batch) {
            for (Object item : batch) {
                if (item instanceof Document description && description.get("info") instanceof Document info
                        && description.get("name") instanceof String name) {
                    MongoCollection<Integer> collection = resolveCollection(name, false);
                    if (collection != null) {
                        info.put("uuid", collection.getUuid());
                    }
                }
            }
        }
        return response;
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
