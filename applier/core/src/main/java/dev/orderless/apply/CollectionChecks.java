package dev.orderless.apply;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoCollection;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.internal.MongoErrors;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link GuardedApplier} checks about its collection before it applies anything: set-ups under which
 * every message would fail the same way fail once, at start-up, with {@link InvalidConfigurationException}
 * saying what to change.
 */
final class CollectionChecks {
    private static final Logger log = LoggerFactory.getLogger(CollectionChecks.class);
    private static final int UNAUTHORIZED = 13;
    private static final int NAMESPACE_NOT_FOUND = 26;

    private CollectionChecks() {
    }

    /** The collection's codec registry must encode the applier's filters and updates, or every message would look like bad input. */
    static void codecs(MongoCollection<BsonDocument> collection) {
        try {
            Queries.assignFilter("e", 1L, "f").toBsonDocument(BsonDocument.class, collection.getCodecRegistry());
            Queries.assignUpdate(1L, "f", new BsonString("v")).toBsonDocument(BsonDocument.class,
                    collection.getCodecRegistry());
        } catch (RuntimeException e) {
            throw new InvalidConfigurationException("applier: collection " + name(collection) + " cannot encode"
                    + " orderless' queries with its codec registry (" + e.getMessage() + "); use"
                    + " MongoClientSettings.getDefaultCodecRegistry() or one that includes ValueCodecProvider and"
                    + " BsonValueCodecProvider", e);
        }
    }

    /**
     * The collection's default collation must be simple: the guards compare keys the server's way and the
     * plans the Java way, and under a case-insensitive collation the two disagree. Seen on the {@code _id}
     * index, which carries the collection's default collation; a collection not created yet has none, and
     * a user without the listIndexes privilege gets a WARN instead of the check.
     *
     * @throws dev.orderless.TransientException if MongoDB cannot be asked now
     */
    static void collation(MongoCollection<BsonDocument> collection) {
        String name = name(collection);
        try {
            for (BsonDocument index : collection.listIndexes(BsonDocument.class)) {
                BsonValue collation = index.get("collation");
                if (MongoErrors.ID_INDEX.equals(index.getString("name", new BsonString("")).getValue())
                        && collation != null && collation.isDocument() && !"simple".equals(
                        collation.asDocument().getString("locale", new BsonString("simple")).getValue())) {
                    throw new InvalidConfigurationException("applier: collection " + name + " has the default collation "
                            + collation.asDocument().toJson() + "; orderless compares keys exactly: use a collection"
                            + " created without a collation (or with {locale: 'simple'})");
                }
            }
        } catch (MongoCommandException e) {
            if (e.getErrorCode() == UNAUTHORIZED) {
                log.warn("cannot check the collation of collection {}: the user may not list its indexes ({});"
                        + " orderless needs the simple collation", name, e.getErrorMessage());
            } else if (e.getErrorCode() != NAMESPACE_NOT_FOUND) {
                throw MongoErrors.translate("check collection " + name, e);
            }
        } catch (InvalidConfigurationException e) {
            throw e;
        } catch (RuntimeException e) {
            throw MongoErrors.translate("check collection " + name, e);
        }
    }

    private static String name(MongoCollection<BsonDocument> collection) {
        return collection.getNamespace().getCollectionName();
    }
}
