package dev.orderless.outbox;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Sorts.ascending;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.unset;

import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.result.UpdateResult;
import dev.orderless.apply.MongoErrors;
import dev.orderless.apply.Operation;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * The outbox collection: every query on it, and its field names, in one place. Writes go with majority
 * write concern whatever the collection was given with: an entry that a failover could roll back is an
 * action lost after {@code record} returned.
 *
 * <pre>
 * { _id: ObjectId("..."),            // made here: a retried insert is recognised as the same entry
 *   entity: "student-17", seq: 1045,
 *   body: BinData(0, "{\"entity\":...}"),   // the message exactly as it is published (canonical JSON)
 *   due: ISODate("..."),             // claimable from then on: the record time, or a claim's expiry
 *   claim: "relay-host-1:7",         // the relay round that claimed it last (absent until claimed)
 *   tries: 2,                        // claims so far
 *   error: "..." }                   // only on an entry no relay can publish (its due is then far away)
 * </pre>
 */
final class OutboxStore {
    static final String ID = "_id";
    static final String ENTITY = "entity";
    static final String SEQ = "seq";
    static final String BODY = "body";
    static final String DUE = "due";
    static final String CLAIM = "claim";
    static final String TRIES = "tries";
    static final String ERROR = "error";
    /** Where an entry that can never be published waits for an operator: never due. */
    static final Instant PARKED = Instant.parse("9999-01-01T00:00:00Z");

    private final MongoCollection<BsonDocument> entries;

    OutboxStore(MongoCollection<BsonDocument> entries) {
        this.entries = entries.withDocumentClass(BsonDocument.class).withWriteConcern(WriteConcern.MAJORITY);
    }

    String name() {
        return entries.getNamespace().getCollectionName();
    }

    MongoCollection<BsonDocument> collection() {
        return entries;
    }

    /** The index the relays' claim query runs on; idempotent. */
    void ensureIndex() {
        entries.createIndex(Indexes.ascending(DUE), new IndexOptions().name("orderless_outbox_due"));
    }

    /** Stores {@code op}, due at once. One round trip; a retried insert of the same entry is not an error. */
    void insert(Operation op, byte[] body, Instant now) {
        BsonDocument entry = new BsonDocument(ID, new BsonObjectId(new ObjectId()))
                .append(ENTITY, new BsonString(op.entity()))
                .append(SEQ, new BsonInt64(op.seq()))
                .append(BODY, new BsonBinary(body))
                .append(DUE, new BsonDateTime(now.toEpochMilli()));
        try {
            entries.insertOne(entry);
        } catch (MongoException e) {
            // the driver retried a write that had landed: this very entry is stored
            if (!MongoErrors.isDuplicateKey(e)) {
                throw e;
            }
        }
    }

    /** How many entries wait, parked ones included (the collection's count: cheap, not exact mid-write). */
    long backlog() {
        return entries.estimatedDocumentCount();
    }

    /** When the oldest waiting entry was recorded (its id's time, to the second), if any waits. */
    Optional<Instant> oldest() {
        BsonDocument first = entries.find().sort(ascending(ID)).projection(new BsonDocument(ID, new BsonInt64(1)))
                .limit(1).first();
        return Optional.ofNullable(first).map(d -> d.getObjectId(ID).getValue().getDate().toInstant());
    }

    /**
     * Claims up to {@code limit} due entries for {@code token} until {@code until}: those another relay
     * did not claim first. Two round trips when nobody competes, three when someone does.
     */
    List<BsonDocument> claim(String token, int limit, Instant now, Instant until) {
        List<BsonDocument> due = entries.find(lte(DUE, new BsonDateTime(now.toEpochMilli()))).sort(ascending(DUE))
                .limit(limit).into(new ArrayList<>());
        if (due.isEmpty()) {
            return due;
        }
        List<BsonValue> ids = due.stream().map(d -> d.get(ID)).toList();
        UpdateResult claimed = entries.updateMany(and(in(ID, ids), lte(DUE, new BsonDateTime(now.toEpochMilli()))),
                combine(set(CLAIM, token), set(DUE, new BsonDateTime(until.toEpochMilli())), inc(TRIES, 1)));
        if (claimed.getModifiedCount() == ids.size()) {
            return due;
        }
        // another relay claimed some of them between the read and the claim: keep only ours
        return entries.find(and(in(ID, ids), eq(CLAIM, token))).into(new ArrayList<>());
    }

    /** Removes entries the broker confirmed: whoever claims them now, they are published. */
    void remove(List<BsonValue> ids) {
        if (!ids.isEmpty()) {
            entries.deleteMany(in(ID, ids));
        }
    }

    /** Gives claimed entries back, due at {@code due}, if they are still this round's. */
    void release(List<BsonValue> ids, String token, Instant due) {
        if (!ids.isEmpty()) {
            entries.updateMany(and(in(ID, ids), eq(CLAIM, token)),
                    combine(set(DUE, new BsonDateTime(due.toEpochMilli())), unset(CLAIM)));
        }
    }

    /** Sets aside an entry no relay can publish, with the reason; it stays, for an operator, and is never due. */
    void park(BsonValue id, String reason) {
        entries.updateOne(eq(ID, id), combine(set(DUE, new BsonDateTime(PARKED.toEpochMilli())),
                set(ERROR, reason), unset(CLAIM)));
    }

    /** How many entries are set aside as unpublishable. */
    long parked() {
        return entries.countDocuments(eq(DUE, new BsonDateTime(PARKED.toEpochMilli())));
    }
}
