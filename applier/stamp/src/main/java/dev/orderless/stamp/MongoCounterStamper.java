package dev.orderless.stamp;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Projections.include;
import static com.mongodb.client.model.Updates.inc;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.internal.MongoErrors;
import org.bson.BsonDocument;

/**
 * A counter per entity in MongoDB: {@code findOneAndUpdate({_id: entity}, {$inc: {seq: 1}})} with upsert,
 * returning the new value.
 *
 * <p>Guarantee: per entity, strictly increasing across every producer process and thread, because
 * every stamp is one atomic increment of one document (use write concern majority, the default here, so
 * a failover cannot hand out a value twice). Seqs may have gaps (a stamped message that is never sent),
 * which is harmless. Cost: one round trip per stamp.
 *
 * <pre>
 * { _id: "student-17", seq: 1045 }
 * </pre>
 */
public final class MongoCounterStamper implements Stamper {
    static final String SEQ = "seq";
    private static final int MAX_ATTEMPTS = 16;

    private final MongoCollection<BsonDocument> counters;
    /*
     * The projection is not only thrift: mongo-java-server returns the stored document itself and encodes it
     * after releasing its lock, so without a projection (which copies) two concurrent stamps can both be
     * sent the later value. Pinned by the conformance suite.
     */
    private final FindOneAndUpdateOptions upsertAfter = new FindOneAndUpdateOptions().upsert(true)
            .returnDocument(ReturnDocument.AFTER).projection(include(SEQ));

    private MongoCounterStamper(MongoCollection<BsonDocument> counters) {
        this.counters = counters;
    }

    /** Stamps with counters in {@code counters} (a collection of its own, e.g. {@code seq_counters}). */
    public static MongoCounterStamper create(MongoCollection<BsonDocument> counters) {
        if (counters == null) {
            throw new InvalidConfigurationException("counter stamper: the counters collection is required");
        }
        return new MongoCounterStamper(counters);
    }

    @Override
    public long next(String entity) {
        if (entity == null || entity.isEmpty()) {
            throw new IllegalArgumentException("entity must not be empty");
        }
        for (int attempt = 1; ; attempt++) {
            try {
                BsonDocument counter = counters.findOneAndUpdate(eq("_id", entity), inc(SEQ, 1L), upsertAfter);
                return counter.getNumber(SEQ).longValue();
            } catch (MongoException e) {
                // two first stamps of a new entity raced on the upsert: the loser increments the winner's document
                if (!MongoErrors.isDuplicateKey(e) || attempt == MAX_ATTEMPTS) {
                    throw MongoErrors.translate("stamp for '" + entity + "'", e);
                }
            }
        }
    }
}
