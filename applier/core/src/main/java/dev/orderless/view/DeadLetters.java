package dev.orderless.view;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.setOnInsert;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import java.time.Instant;
import java.util.Date;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The view's dead-letter collection: change events a feeder gave up on, one document per source document
 * version, so an event replayed after a crash is recorded once.
 *
 * <pre>
 * { _id: { resource: "view:class_rosters", source: "student-3", v: 4 },
 *   reason: "BsonInvalidOperationException: Value expected to be of type ARRAY is of type STRING",
 *   attempts: 3, at: ISODate(...), owner: "host-1/5f0c...", fence: 7 }
 * </pre>
 *
 * A dead letter needs no replay: the next version of the same source document is projected as usual
 * and heals the view. The collection is for people: what was skipped, and why.
 */
final class DeadLetters {
    static final String ID = "_id";
    static final String RESOURCE = "resource";
    static final String SOURCE = "source";
    static final String VERSION = "v";
    static final String REASON = "reason";
    static final String ATTEMPTS = "attempts";
    static final String AT = "at";
    static final String OWNER = "owner";
    static final String FENCE = "fence";
    /** A reason is for reading, not a stack trace; MongoDB would take more, people would not. */
    private static final int MAX_REASON = 1000;

    private final MongoCollection<BsonDocument> collection;
    private final String resource;

    DeadLetters(MongoCollection<BsonDocument> collection, String resource) {
        this.collection = collection;
        this.resource = resource;
    }

    String name() {
        return collection.getNamespace().getCollectionName();
    }

    /** Records the event once; true if this call recorded it, false if it was already there. */
    boolean record(BsonValue source, long version, String reason, int attempts, String owner, long fence) {
        BsonDocument id = new BsonDocument(RESOURCE, new BsonString(resource)).append(SOURCE, source)
                .append(VERSION, new BsonInt64(version));
        String shortReason = reason.length() > MAX_REASON ? reason.substring(0, MAX_REASON) + "..." : reason;
        try {
            return collection.updateOne(eq(ID, id), combine(setOnInsert(REASON, shortReason),
                            setOnInsert(ATTEMPTS, attempts), setOnInsert(AT, Date.from(Instant.now())),
                            setOnInsert(OWNER, owner), setOnInsert(FENCE, fence)),
                    new UpdateOptions().upsert(true)).getUpsertedId() != null;
        } catch (MongoWriteException e) {
            if (ErrorCategory.fromErrorCode(e.getCode()) == ErrorCategory.DUPLICATE_KEY) {
                return false;   // a concurrent upsert of the same letter won the insert
            }
            throw e;
        }
    }

    /** How many events this resource dead-lettered. */
    long count() {
        return collection.countDocuments(eq(ID + "." + RESOURCE, resource));
    }
}
