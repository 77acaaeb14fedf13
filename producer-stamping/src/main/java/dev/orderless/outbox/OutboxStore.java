package dev.orderless.outbox;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.type;
import static com.mongodb.client.model.Sorts.ascending;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.unset;

import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.result.UpdateResult;
import dev.orderless.apply.Operation;
import dev.orderless.internal.MongoErrors;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonBinary;
import org.bson.BsonType;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
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
 *   refusals: 1,                     // sends refused because of the message itself, while others went through
 *   refusedAt: ISODate("..."),       // the last such refusal
 *   error: "...",                    // why it was last refused, or why it is parked
 *   parkedAt: ISODate("...") }       // only on a parked entry: set aside, its due far away (PARKED)
 * </pre>
 *
 * A parked entry is one no relay will publish until an operator retries it: it is not waiting, so it is
 * out of the backlog and of the oldest entry's age.
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
    static final String REFUSALS = "refusals";
    static final String REFUSED_AT = "refusedAt";
    static final String PARKED_AT = "parkedAt";
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

    /**
     * How many entries wait to be published, parked ones not counted (the collection's estimated count
     * less the parked: cheap, not exact mid-write).
     */
    long backlog() {
        return backlog(parked());
    }

    /** {@link #backlog()}, given the parked entries just counted. */
    long backlog(long parked) {
        return Math.max(0, entries.estimatedDocumentCount() - parked);
    }

    /** When the oldest waiting (not parked) entry was recorded (its id's time, to the second), if any waits. */
    Optional<Instant> oldest() {
        // entries written by hand may have another kind of _id: they have no record time to read
        BsonDocument first = entries.find(and(lt(DUE, parkedDue()), type(ID, BsonType.OBJECT_ID))).sort(ascending(ID))
                .projection(new BsonDocument(ID, new BsonInt64(1))).limit(1).first();
        return Optional.ofNullable(first).map(d -> d.getObjectId(ID).getValue().getDate().toInstant());
    }

    /**
     * Claims up to {@code limit} due entries for {@code token} until {@code until}: those another relay
     * did not claim first. Two round trips when nobody competes, three when someone does.
     */
    List<BsonDocument> claim(String token, int limit, Instant now, Instant until) {
        return claim(due(limit, now), token, now, until);
    }

    /** Up to {@code limit} entries due at {@code now}, the longest due first: what a relay is about to claim. */
    List<BsonDocument> due(int limit, Instant now) {
        return entries.find(lte(DUE, new BsonDateTime(now.toEpochMilli()))).sort(ascending(DUE))
                .limit(limit).into(new ArrayList<>());
    }

    /**
     * Claims {@code due} (read by {@link #due}) for {@code token} until {@code until}: those another relay did not
     * claim first. One round trip when nobody competes, two when someone does. If it fails, the claim may have
     * landed all the same (its reply lost): whoever calls it hands {@code due} back under {@code token}.
     */
    List<BsonDocument> claim(List<BsonDocument> due, String token, Instant now, Instant until) {
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

    /**
     * Gives back an entry whose message could not be sent, due at {@code due}, with why. Counted as a
     * refusal of the entry only if {@code counts} (the relay saw other entries go through meanwhile).
     *
     * @return the entry's refusals so far, if it was still this round's
     */
    Optional<Integer> refused(BsonValue id, String token, String reason, boolean counts, Instant now, Instant due) {
        BsonDocument after = entries.findOneAndUpdate(and(eq(ID, id), eq(CLAIM, token)),
                combine(inc(REFUSALS, counts ? 1 : 0), set(ERROR, reason), set(REFUSED_AT, date(now)),
                        set(DUE, date(due)), unset(CLAIM)),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
        return Optional.ofNullable(after).map(d -> d.getNumber(REFUSALS, new BsonInt32(0)).intValue());
    }

    /** Sets aside an entry no relay can publish, with the reason; it stays, for an operator, and is never due. */
    void park(BsonValue id, String reason, Instant now) {
        entries.updateOne(eq(ID, id), combine(set(DUE, parkedDue()), set(ERROR, reason), set(PARKED_AT, date(now)),
                unset(CLAIM)));
    }

    /** How many entries are set aside as unpublishable. */
    long parked() {
        return entries.countDocuments(eq(DUE, parkedDue()));
    }

    /** The first {@code max} parked entries, oldest first. */
    List<ParkedEntry> parkedEntries(int max) {
        List<ParkedEntry> parked = new ArrayList<>();
        for (BsonDocument d : entries.find(eq(DUE, parkedDue())).sort(ascending(ID)).limit(max)) {
            // parked entries include hand-written ones that are not operations: read every field leniently
            BsonValue id = d.get(ID);
            BsonValue entity = d.get(ENTITY, new BsonString(""));
            BsonValue seq = d.get(SEQ, new BsonInt64(0));
            BsonValue error = d.get(ERROR, new BsonString(""));
            BsonValue parkedAt = d.get(PARKED_AT, new BsonDateTime(0));
            BsonValue tries = d.get(TRIES, new BsonInt32(0));
            parked.add(new ParkedEntry(id.isObjectId() ? id.asObjectId().getValue().toHexString() : idText(id),
                    entity.isString() ? entity.asString().getValue() : entity.toString(),
                    seq.isNumber() ? seq.asNumber().longValue() : 0,
                    id.isObjectId() ? id.asObjectId().getValue().getDate().toInstant() : Instant.EPOCH,
                    error.isString() ? error.asString().getValue() : error.toString(),
                    Instant.ofEpochMilli(parkedAt.isDateTime() ? parkedAt.asDateTime().getValue() : 0),
                    tries.isNumber() ? tries.asNumber().intValue() : 0));
        }
        return parked;
    }

    /** Makes parked entries due now, their refusals forgotten: relays publish them as if just recorded. */
    long unpark(Bson which, Instant now) {
        return entries.updateMany(and(eq(DUE, parkedDue()), which), combine(set(DUE, date(now)), set(REFUSALS, 0),
                unset(ERROR), unset(PARKED_AT), unset(REFUSED_AT))).getModifiedCount();
    }

    /** Drops parked entries for good. */
    long dropParked(Bson which) {
        return entries.deleteMany(and(eq(DUE, parkedDue()), which)).getDeletedCount();
    }

    /** The filter for parked entries with these ids, as {@link ParkedEntry#id()} gives them. */
    static Bson ids(java.util.Collection<String> ids) {
        List<BsonValue> values = new ArrayList<>();
        for (String id : ids) {
            if (ObjectId.isValid(id)) {
                values.add(new BsonObjectId(new ObjectId(id)));
            } else if (id.startsWith("\"") && id.endsWith("\"") && id.length() > 1) {
                values.add(new BsonString(id.substring(1, id.length() - 1)));   // a hand-written entry's string _id
            } else {
                throw new dev.orderless.InvalidInputException("'" + id + "' is not an outbox entry id (24 hex"
                        + " characters, as 'parked list' shows them)");
            }
        }
        return in(ID, values);
    }

    /** An _id that is not an ObjectId, as list shows it and {@link #ids} reads it back (strings quoted). */
    private static String idText(BsonValue id) {
        return id.isString() ? "\"" + id.asString().getValue() + "\"" : id.toString();
    }

    private static BsonDateTime parkedDue() {
        return date(PARKED);
    }

    private static BsonDateTime date(Instant at) {
        return new BsonDateTime(at.toEpochMilli());
    }
}
