package dev.orderless.lease;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.ne;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Filters.regex;
import static com.mongodb.client.model.Projections.include;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;

import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.internal.MongoErrors;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Leases in a MongoDB collection, one document per resource (see {@link LeaseFields}).
 *
 * <p>Acquiring is one {@code findOneAndUpdate} with upsert and write concern majority:
 * <ol>
 *   <li>filter: this resource, and either no owner or an expiry at or before now;
 *   <li>update: owner = me, expiry = now + ttl, {@code fence += 1};
 *   <li>no document matched and the upsert hit the existing {@code _id}: someone holds it, so empty.
 * </ol>
 * The fence rises on every change of owner, including the same node winning the lease back after it
 * expired, and never falls: release unsets the owner but keeps the document. A better answer than a
 * TTL-index lock: no 60-second sweep, and every holder gets a fencing number.
 */
public final class MongoLeaseProvider implements LeaseProvider {
    private final MongoCollection<BsonDocument> leases;
    private final LeaseOptions options;

    private MongoLeaseProvider(MongoCollection<BsonDocument> leases, LeaseOptions options) {
        this.leases = leases.withWriteConcern(WriteConcern.MAJORITY);
        this.options = options;
    }

    /**
     * A provider over {@code leases}, which it writes with write concern majority whatever the collection's
     * own. Makes no call to MongoDB: the collection and its documents are created on the first acquire.
     *
     * @param leases  the collection of lease documents, one per resource
     * @param options lease timing
     * @return the provider; thread-safe
     * @throws InvalidConfigurationException if either argument is null
     */
    public static MongoLeaseProvider create(MongoCollection<BsonDocument> leases, LeaseOptions options) {
        if (leases == null || options == null) {
            throw new InvalidConfigurationException("lease provider: collection and options are required");
        }
        return new MongoLeaseProvider(leases, options);
    }

    /**
     * One query: the documents whose {@code _id} starts with {@code prefix}, with an owner and not yet expired.
     *
     * @param prefix the start of the resources to list
     * @return the live holders by resource, always present: this provider can list them
     * @throws dev.orderless.OrderlessException if MongoDB refuses or does not answer the query (a
     *                                          {@link dev.orderless.TransientException} where it may pass)
     */
    @Override
    public Optional<Map<String, String>> holders(String prefix) {
        Instant now = options.clock().instant();
        Map<String, String> holders = new TreeMap<>();
        try {
            leases.find(and(regex(LeaseFields.ID, "^" + literal(prefix)), ne(LeaseFields.OWNER, null),
                            gt(LeaseFields.EXPIRES_AT, Date.from(now))))
                    .projection(include(LeaseFields.OWNER))
                    .forEach(doc -> holders.put(doc.getString(LeaseFields.ID).getValue(),
                            doc.getString(LeaseFields.OWNER).getValue()));
        } catch (MongoException e) {
            throw MongoErrors.translate("list leases '" + prefix + "*'", e);
        }
        return Optional.of(holders);
    }

    /** {@code text} as a regular expression matching itself: its metacharacters escaped one by one. */
    private static String literal(String text) {
        StringBuilder escaped = new StringBuilder();
        for (char c : text.toCharArray()) {
            if ("\\^$.|?*+()[]{}".indexOf(c) >= 0) {
                escaped.append('\\');
            }
            escaped.append(c);
        }
        return escaped.toString();
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, String owner) {
        if (resource == null || resource.isEmpty() || owner == null || owner.isEmpty()) {
            throw new IllegalArgumentException("resource and owner must not be empty");
        }
        Instant now = options.clock().instant();
        try {
            BsonDocument acquired = leases.findOneAndUpdate(
                    and(eq(LeaseFields.ID, resource),
                            or(eq(LeaseFields.OWNER, null), lte(LeaseFields.EXPIRES_AT, Date.from(now)))),
                    combine(set(LeaseFields.OWNER, owner),
                            set(LeaseFields.EXPIRES_AT, Date.from(now.plus(options.ttl()))),
                            set(LeaseFields.ACQUIRED_AT, Date.from(now)),
                            inc(LeaseFields.FENCE, 1L)),
                    new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
                            .projection(include(LeaseFields.FENCE, LeaseFields.POSITION)));
            long fence = acquired.getNumber(LeaseFields.FENCE).longValue();
            BsonValue position = acquired.get(LeaseFields.POSITION);
            Optional<BsonDocument> committed = position != null && position.isDocument()
                    ? Optional.of(position.asDocument()) : Optional.empty();
            return Optional.of(MongoLease.start(leases, options, resource, owner, fence, committed, now));
        } catch (MongoException e) {
            if (MongoErrors.isDuplicateKey(e)) {
                return Optional.empty();
            }
            throw MongoErrors.translate("acquire lease '" + resource + "'", e);
        }
    }
}
