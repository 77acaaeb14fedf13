package dev.orderless.view;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.lease.Lease;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Which source collection a committed position belongs to: its uuid, from {@code listCollections}. A
 * source dropped and recreated under the same name is a new collection with a new uuid, whose documents
 * restart at {@code _v} 1 against view entries with higher seqs; resuming, or even rebuilding by a scan,
 * would mix the two. The feeder stops instead, saying what to do.
 */
final class SourceIdentity {
    private SourceIdentity() {
    }

    /** The collection's uuid, or empty if the server does not report one (or the collection does not exist yet). */
    static Optional<BsonValue> uuid(MongoDatabase database, String collection) {
        // a failure propagates (the term ends and retries): treating it as "no uuid" would skip the check.
        // Matched by name here too: the embedded server ignores listCollections' filter
        for (BsonDocument description : database.listCollections(BsonDocument.class).filter(eq("name", collection))) {
            if (description.isString("name") && description.getString("name").getValue().equals(collection)
                    && description.isDocument("info")) {
                return Optional.ofNullable(description.getDocument("info").get("uuid"));
            }
        }
        return Optional.empty();
    }

    static void requireSame(String resource, MongoCollection<BsonDocument> source, Optional<BsonValue> committed,
                            Optional<BsonValue> current, Lease lease) {
        if (committed.isPresent() && current.isPresent() && !committed.get().equals(current.get())) {
            throw new FeederStoppedException("the source collection '" + source.getNamespace().getCollectionName()
                    + "' was dropped and recreated since the view feeder '" + resource + "' last committed (uuid "
                    + committed.get() + ", now " + current.get() + "); it stopped. " + whatToDo(resource, lease));
        }
    }

    static String whatToDo(String resource, Lease lease) {
        return "The view still holds what the old source contributed. To rebuild it: stop every feeder of '" + resource
                + "', drop or clear the view collection, unset 'position' in the lease document '" + lease.resource()
                + "' ({$unset: {position: 1}}), and start the feeders: they rebuild from a scan of the new source";
    }
}
