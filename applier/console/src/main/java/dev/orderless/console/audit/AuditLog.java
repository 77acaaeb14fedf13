package dev.orderless.console.audit;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import dev.orderless.InvalidConfigurationException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * Every action taken through the console, kept in MongoDB: who did what to which letters, when, how many, and with
 * what outcome, refusals and failures included. An entry is written once the action's outcome is known; an entry
 * that cannot be written fails the request (the action is done, and the operator is told its record is missing).
 */
public final class AuditLog {
    /** The most letter ids an entry names: a larger action names its selection instead. */
    public static final int MAX_IDS = 100;

    private static final String AT = "at";
    private static final String USER = "user";
    private static final String INSTANCE = "instance";
    private static final String ACTION = "action";
    private static final String QUEUE = "queue";
    private static final String SELECTION = "selection";
    private static final String IDS = "ids";
    private static final String COUNT = "count";
    private static final String OUTCOME = "outcome";
    private static final String OK = "ok";

    private final MongoCollection<BsonDocument> entries;
    private final Clock clock;

    private AuditLog(MongoCollection<BsonDocument> entries, Clock clock) {
        this.entries = entries;
        this.clock = clock;
    }

    /**
     * The log in {@code entries}, its indexes created if missing.
     *
     * @param entries the collection
     * @param clock   the time entries are written with
     * @return the log
     */
    public static AuditLog create(MongoCollection<BsonDocument> entries, Clock clock) {
        if (entries == null || clock == null) {
            throw new InvalidConfigurationException("audit log: a collection and a clock are required");
        }
        entries.createIndex(Indexes.descending(AT));
        entries.createIndex(Indexes.ascending(IDS));
        return new AuditLog(entries, clock);
    }

    /**
     * One action on record.
     *
     * @param id        the entry's id
     * @param at        when the outcome was known
     * @param user      who acted (their login name, or {@code anonymous})
     * @param instance  the instance that carried it out
     * @param action    replay, edit-replay, park, unpark or purge
     * @param queue     the work queue whose letters it took, if one
     * @param selection which letters, in words (the filter or the ids)
     * @param ids       the letters it changed, the first {@value #MAX_IDS}
     * @param count     how many letters it changed
     * @param outcome   its result line, or why it was refused or failed
     * @param ok        false if it was refused or failed
     */
    public record Entry(String id, Instant at, String user, String instance, String action, Optional<String> queue,
                        String selection, List<String> ids, long count, String outcome, boolean ok) {
        /** Copies the list. */
        public Entry {
            ids = List.copyOf(ids);
        }
    }

    /**
     * Writes an entry.
     *
     * @return its id
     */
    public String record(String user, String instance, String action, Optional<String> queue, String selection,
                         List<String> ids, long count, String outcome, boolean ok) {
        ObjectId id = new ObjectId();
        BsonArray named = new BsonArray();
        ids.stream().limit(MAX_IDS).forEach(letter -> named.add(new BsonString(letter)));
        BsonDocument entry = new BsonDocument("_id", new BsonObjectId(id))
                .append(AT, new BsonDateTime(clock.millis())).append(USER, new BsonString(user))
                .append(INSTANCE, new BsonString(instance)).append(ACTION, new BsonString(action))
                .append(SELECTION, new BsonString(selection)).append(IDS, named).append(COUNT, new BsonInt64(count))
                .append(OUTCOME, new BsonString(outcome)).append(OK, BsonBoolean.valueOf(ok));
        queue.ifPresent(q -> entry.append(QUEUE, new BsonString(q)));
        entries.insertOne(entry);
        return id.toHexString();
    }

    /** The latest {@code limit} entries, newest first. */
    public List<Entry> latest(int limit) {
        List<Entry> found = new ArrayList<>();
        entries.find().sort(Sorts.descending(AT, "_id")).limit(limit).forEach(doc -> found.add(entry(doc)));
        return found;
    }

    /** The entries naming the letter {@code id}, newest first. */
    public List<Entry> of(String letter) {
        List<Entry> found = new ArrayList<>();
        entries.find(eq(IDS, letter)).sort(Sorts.descending(AT, "_id")).limit(MAX_IDS)
                .forEach(doc -> found.add(entry(doc)));
        return found;
    }

    private static Entry entry(BsonDocument doc) {
        List<String> ids = new ArrayList<>();
        for (BsonValue id : doc.getArray(IDS, new BsonArray())) {
            ids.add(id.asString().getValue());
        }
        return new Entry(doc.getObjectId("_id").getValue().toHexString(),
                Instant.ofEpochMilli(doc.getDateTime(AT).getValue()), doc.getString(USER).getValue(),
                doc.getString(INSTANCE).getValue(), doc.getString(ACTION).getValue(),
                doc.isString(QUEUE) ? Optional.of(doc.getString(QUEUE).getValue()) : Optional.empty(),
                doc.getString(SELECTION).getValue(), ids, doc.getNumber(COUNT).longValue(),
                doc.getString(OUTCOME).getValue(), doc.getBoolean(OK).getValue());
    }
}
