package dev.orderless.console.letters;

import static com.mongodb.client.model.Accumulators.addToSet;
import static com.mongodb.client.model.Accumulators.first;
import static com.mongodb.client.model.Accumulators.max;
import static com.mongodb.client.model.Accumulators.min;
import static com.mongodb.client.model.Accumulators.sum;
import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.or;
import static com.mongodb.client.model.Filters.regex;
import static dev.orderless.console.letters.LetterFields.AT;
import static dev.orderless.console.letters.LetterFields.AT_KNOWN;
import static dev.orderless.console.letters.LetterFields.BODY;
import static dev.orderless.console.letters.LetterFields.BODY_BYTES;
import static dev.orderless.console.letters.LetterFields.CAUSE;
import static dev.orderless.console.letters.LetterFields.DEATHS;
import static dev.orderless.console.letters.LetterFields.DEAD_LETTER_QUEUE;
import static dev.orderless.console.letters.LetterFields.EDITED_BODY;
import static dev.orderless.console.letters.LetterFields.ENTITY;
import static dev.orderless.console.letters.LetterFields.HELD_IN;
import static dev.orderless.console.letters.LetterFields.ID;
import static dev.orderless.console.letters.LetterFields.KIND;
import static dev.orderless.console.letters.LetterFields.LETTER_ID;
import static dev.orderless.console.letters.LetterFields.PROPERTIES;
import static dev.orderless.console.letters.LetterFields.QUEUE;
import static dev.orderless.console.letters.LetterFields.REASON;
import static dev.orderless.console.letters.LetterFields.REPLAYS;
import static dev.orderless.console.letters.LetterFields.RESOLVED_AT;
import static dev.orderless.console.letters.LetterFields.RESOLVED_BY;
import static dev.orderless.console.letters.LetterFields.SEQ;
import static dev.orderless.console.letters.LetterFields.SHOWN_REASON;
import static dev.orderless.console.letters.LetterFields.STATUS;
import static dev.orderless.console.letters.LetterFields.STORED_AT;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import com.rabbitmq.client.AMQP;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.DeadLetterQueue;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BSONException;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.conversions.Bson;

/**
 * The dead letters kept in one MongoDB collection, where they can be searched and acted on however many there are
 * (docs/decisions/0009-letters-kept-in-mongodb.md).
 *
 * <p>What it guarantees:
 * <ul>
 *   <li>A letter stored twice is kept once: its id is derived from the letter (the id orderless gave it when it
 *       dead-lettered it, else a digest of its properties and body), so a reader that stored a letter and stopped
 *       before acknowledging it stores it again harmlessly.
 *   <li>Changing a letter's status names the statuses it may come from: two operators acting on one letter at once
 *       change it once, and the loser's count says so.
 *   <li>A letter not dealt with (dead or parked) is kept until it is; a replayed or purged one is dropped by MongoDB
 *       a retention after (a TTL index on its resolution time).
 * </ul>
 */
public final class LetterStore {
    /** The widest body kept in a letter: a larger one would not fit in a MongoDB document with its properties. */
    public static final int MAX_BODY_BYTES = 15 * 1024 * 1024;

    /** RabbitMQ's record of each time it dead-lettered a message itself. */
    private static final String X_DEATH = "x-death";

    private final MongoCollection<BsonDocument> letters;
    private final Clock clock;

    private LetterStore(MongoCollection<BsonDocument> letters, Clock clock) {
        this.letters = letters;
        this.clock = clock;
    }

    /**
     * The store in {@code letters}, its indexes created if missing.
     *
     * @param letters   the collection
     * @param retention how long a replayed or purged letter is kept
     * @param clock     what "now" is, for ages and resolution times
     * @return the store
     */
    public static LetterStore create(MongoCollection<BsonDocument> letters, Duration retention, Clock clock) {
        if (letters == null || retention == null || clock == null || retention.isNegative() || retention.isZero()) {
            throw new InvalidConfigurationException("letter store: a collection, a positive retention and a clock are"
                    + " required, were " + letters + ", " + retention + ", " + clock);
        }
        letters.createIndex(Indexes.compoundIndex(Indexes.ascending(QUEUE), Indexes.ascending(STATUS),
                Indexes.descending(AT), Indexes.descending(ID)));
        // the page's first question, every dead letter newest first, names no queue
        letters.createIndex(Indexes.compoundIndex(Indexes.ascending(STATUS), Indexes.descending(AT),
                Indexes.descending(ID)));
        letters.createIndex(Indexes.ascending(ENTITY));
        letters.createIndex(Indexes.ascending(STORED_AT));
        letters.createIndex(Indexes.ascending(RESOLVED_AT), new IndexOptions()
                .expireAfter(retention.toSeconds(), TimeUnit.SECONDS).name("orderless_letter_retention"));
        return new LetterStore(letters, clock);
    }

    /** @return the collection the letters are in */
    public MongoCollection<BsonDocument> collection() {
        return letters;
    }

    /**
     * A letter as it arrived in a dead-letter queue, ready to be stored.
     *
     * @param document the stored document
     */
    record Incoming(BsonDocument document) {
        String id() {
            return document.getString(ID).getValue();
        }
    }

    /**
     * A letter taken from {@code deadLetterQueue}, as it will be stored: understood as {@link DeadLetterQueue} does,
     * its body whole (at most {@link #MAX_BODY_BYTES}).
     */
    Incoming incoming(String workQueue, String deadLetterQueue, AMQP.BasicProperties props, byte[] body) {
        if (body.length > MAX_BODY_BYTES) {
            throw new IllegalArgumentException("a letter of " + body.length + " bytes is larger than the store keeps");
        }
        return incoming(workQueue, deadLetterQueue, props, body, Optional.empty());
    }

    /**
     * A letter too large to keep, moved to {@code heldIn} with its body: stored parked, without its body, so that it
     * is seen and counted, and said to be there.
     */
    Incoming heldElsewhere(String workQueue, String deadLetterQueue, AMQP.BasicProperties props, byte[] body,
                           String heldIn) {
        return incoming(workQueue, deadLetterQueue, props, body, Optional.of(heldIn));
    }

    /**
     * Why a MongoDB document cannot hold {@code props} as they are, if it cannot: AMQP lets a header's name hold any
     * character, BSON not a NUL. Such a letter would fail every insert of its batch, client-side, again and again.
     */
    static Optional<String> unstorable(AMQP.BasicProperties props) {
        try {
            new RawBsonDocument(AmqpDocuments.of(props), new BsonDocumentCodec());
            return Optional.empty();
        } catch (BSONException e) {
            return Optional.of(String.valueOf(e.getMessage()));
        }
    }

    /**
     * A letter whose properties MongoDB cannot hold ({@link #unstorable}), moved to {@code heldIn} with its body and
     * properties: stored parked, its properties kept as text, so that it is seen and counted, and said to be there.
     */
    Incoming unstorableHeldElsewhere(String workQueue, String deadLetterQueue, AMQP.BasicProperties props, byte[] body,
                                     String heldIn, String why) {
        BsonDocument doc = incoming(workQueue, deadLetterQueue, props, body, Optional.of(heldIn)).document();
        doc.put(PROPERTIES, new BsonDocument("unstorable", new BsonString(why + "; as they came: " + props)));
        return new Incoming(doc);
    }

    private Incoming incoming(String workQueue, String deadLetterQueue, AMQP.BasicProperties props, byte[] body,
                              Optional<String> heldIn) {
        Instant now = clock.instant();
        DeadLetterQueue.Letter letter = DeadLetterQueue.read(props, body, now);
        BsonDocument properties = AmqpDocuments.of(props);
        BsonDocument doc = new BsonDocument(ID, new BsonString(idOf(letter, properties, body)))
                .append(QUEUE, new BsonString(workQueue))
                .append(DEAD_LETTER_QUEUE, new BsonString(deadLetterQueue))
                .append(KIND, new BsonString(letter.kind()))
                .append(REASON, new BsonString(letter.reason()))
                .append(SHOWN_REASON, new BsonString(DeadLetterQueue.reasonWithoutSubject(letter)))
                .append(CAUSE, new BsonString(DeadLetterQueue.causeOf(letter)))
                .append(ENTITY, letter.entity().<BsonValue>map(BsonString::new).orElse(BsonNull.VALUE))
                .append(SEQ, letter.seq().isPresent() ? new BsonInt64(letter.seq().getAsLong()) : BsonNull.VALUE)
                .append(LETTER_ID, letter.letterId().<BsonValue>map(BsonString::new).orElse(BsonNull.VALUE))
                .append(AT, new BsonDateTime(letter.deadLettered().orElse(now).toEpochMilli()))
                .append(AT_KNOWN, BsonBoolean.valueOf(letter.deadLettered().isPresent()))
                .append(STORED_AT, new BsonDateTime(now.toEpochMilli()))
                .append(REPLAYS, new BsonInt64(letter.replays()))
                .append(STATUS, new BsonString((heldIn.isPresent() ? LetterStatus.PARKED : LetterStatus.DEAD).stored()))
                .append(BODY_BYTES, new BsonInt64(body.length))
                .append(PROPERTIES, properties);
        if (heldIn.isPresent()) {
            doc.append(HELD_IN, new BsonString(heldIn.get()));
        } else {
            doc.append(BODY, new BsonBinary(body));
        }
        BsonArray deaths = new BsonArray();
        letter.deaths().forEach(line -> deaths.add(new BsonString(line)));
        doc.append(DEATHS, deaths);
        return new Incoming(doc);
    }

    /**
     * The letter's id: the id orderless gave it when it dead-lettered it (one per dead-lettering) with RabbitMQ's
     * x-death record beside it, else a digest of its properties and body (a letter the broker dead-lettered itself:
     * its x-death times tell two deaths apart). The x-death record counts with orderless's id because a replay keeps
     * that id: a replayed letter the broker dead-letters itself (a quorum queue's delivery limit) carries the id of
     * the letter that was replayed, and only the x-death entry the broker added tells the two apart; without it the
     * new letter is taken for the stored one, acknowledged and lost. Hex, so it is safe in a URL.
     */
    private static String idOf(DeadLetterQueue.Letter letter, BsonDocument properties, byte[] body) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            if (letter.letterId().isPresent()) {
                digest.update(("orderless:" + letter.letterId().get()).getBytes(StandardCharsets.UTF_8));
                BsonDocument headers = properties.isDocument("headers") ? properties.getDocument("headers")
                        : new BsonDocument();
                if (headers.containsKey(X_DEATH)) {
                    digest.update(new BsonDocument(X_DEATH, headers.get(X_DEATH)).toJson()
                            .getBytes(StandardCharsets.UTF_8));
                }
            } else {
                digest.update(properties.toJson().getBytes(StandardCharsets.UTF_8));
                digest.update(body);
            }
            return HexFormat.of().formatHex(digest.digest(), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    /**
     * Stores {@code incoming}; a letter already stored (the same id) is left as it is.
     *
     * @return how many were new
     * @throws com.mongodb.MongoException if MongoDB refused a write for another reason than a duplicate: nothing is
     *         lost (the caller still holds the letters), some may be stored, storing them again is harmless
     */
    int store(List<Incoming> incoming) {
        if (incoming.isEmpty()) {
            return 0;
        }
        try {
            return letters.insertMany(incoming.stream().map(Incoming::document).toList(),
                    new InsertManyOptions().ordered(false)).getInsertedIds().size();
        } catch (MongoBulkWriteException e) {
            boolean onlyDuplicates = e.getWriteConcernError() == null && e.getWriteErrors().stream()
                    .allMatch(error -> ErrorCategory.fromErrorCode(error.getCode()) == ErrorCategory.DUPLICATE_KEY);
            if (!onlyDuplicates) {
                throw e;
            }
            return incoming.size() - e.getWriteErrors().size();
        }
    }

    /** A page of letters, and where the next begins. */
    public record Page(long total, List<StoredLetter> letters, Optional<String> next) {
        /** Copies the list. */
        public Page {
            letters = List.copyOf(letters);
        }
    }

    /**
     * The letters {@code query} chooses, newest first, {@code limit} at most, after {@code after} (a page's
     * {@link Page#next}).
     */
    public Page find(LetterQuery query, Optional<String> after, int limit) {
        Bson chosen = filter(query);
        Bson paged = after.map(cursor -> and(chosen, before(cursor))).orElse(chosen);
        List<StoredLetter> found = new ArrayList<>();
        letters.find(paged).projection(Projections.exclude(BODY, EDITED_BODY, PROPERTIES))
                .sort(Sorts.descending(AT, ID)).limit(limit + 1).forEach(doc -> found.add(letter(doc)));
        Optional<String> next = Optional.empty();
        if (found.size() > limit) {
            found.remove(limit);
            StoredLetter last = found.get(limit - 1);
            next = Optional.of(last.deadLettered().toEpochMilli() + ":" + last.id());
        }
        return new Page(letters.countDocuments(chosen), found, next);
    }

    /** The ids {@code query} chooses, oldest first, {@code max} at most. */
    List<String> ids(LetterQuery query, int max) {
        List<String> ids = new ArrayList<>();
        letters.find(filter(query)).projection(Projections.include(ID)).sort(Sorts.ascending(AT, ID)).limit(max)
                .forEach(doc -> ids.add(doc.getString(ID).getValue()));
        return ids;
    }

    /** The work queues of the letters {@code ids}. */
    List<String> queuesOf(List<String> ids) {
        List<String> queues = new ArrayList<>();
        letters.distinct(QUEUE, in(ID, ids), org.bson.BsonString.class).forEach(q -> queues.add(q.getValue()));
        return queues;
    }

    /** How many letters {@code query} chooses. */
    public long count(LetterQuery query) {
        return letters.countDocuments(filter(query));
    }

    /** The letter {@code id} with its body, properties and deaths, if it is stored. */
    public Optional<StoredLetter.Full> get(String id) {
        BsonDocument doc = letters.find(eq(ID, id)).first();
        if (doc == null) {
            return Optional.empty();
        }
        List<String> deaths = new ArrayList<>();
        if (doc.isArray(DEATHS)) {
            doc.getArray(DEATHS).forEach(line -> deaths.add(line.asString().getValue()));
        }
        return Optional.of(new StoredLetter.Full(letter(doc),
                doc.isBinary(BODY) ? Optional.of(doc.getBinary(BODY).getData()) : Optional.empty(),
                doc.isBinary(EDITED_BODY) ? Optional.of(doc.getBinary(EDITED_BODY).getData()) : Optional.empty(),
                doc.isDocument(PROPERTIES) ? AmqpDocuments.readable(doc.getDocument(PROPERTIES)) : Map.of(), deaths));
    }

    /** A letter to send back: where to, with what, and whether it is young enough. */
    record Sendable(StoredLetter letter, AMQP.BasicProperties properties, byte[] body) {
    }

    /** The letters {@code ids} still in one of {@code statuses}, with what sending them needs. */
    List<Sendable> sendable(List<String> ids, List<LetterStatus> statuses) {
        List<Sendable> found = new ArrayList<>();
        letters.find(and(in(ID, ids), in(STATUS, statuses.stream().map(LetterStatus::stored).toList())))
                .forEach(doc -> found.add(new Sendable(letter(doc), AmqpDocuments.properties(
                        doc.isDocument(PROPERTIES) ? doc.getDocument(PROPERTIES) : new BsonDocument()),
                        doc.isBinary(BODY) ? doc.getBinary(BODY).getData() : new byte[0])));
        return found;
    }

    /**
     * Moves the letters {@code ids} that are in one of {@code from} to {@code to}; a replayed or purged letter gets its
     * resolution time (the retention's clock), a purged one loses its body.
     *
     * @return how many moved
     */
    long move(List<String> ids, List<LetterStatus> from, LetterStatus to, String by) {
        if (ids.isEmpty()) {
            return 0;
        }
        List<Bson> updates = new ArrayList<>(List.of(Updates.set(STATUS, to.stored())));
        if (to == LetterStatus.REPLAYED || to == LetterStatus.PURGED) {
            updates.add(Updates.set(RESOLVED_AT, new BsonDateTime(clock.millis())));
            updates.add(Updates.set(RESOLVED_BY, by));
        }
        if (to == LetterStatus.PURGED) {
            updates.add(Updates.unset(BODY));
            updates.add(Updates.unset(EDITED_BODY));
        }
        return letters.updateMany(and(in(ID, ids), in(STATUS, from.stream().map(LetterStatus::stored).toList())),
                Updates.combine(updates)).getModifiedCount();
    }

    /** Records the body {@code id} was edited to and replayed with, and marks it replayed, if it is in {@code from}. */
    boolean editedAndReplayed(String id, byte[] edited, List<LetterStatus> from, String by) {
        return letters.updateOne(and(eq(ID, id), in(STATUS, from.stream().map(LetterStatus::stored).toList())),
                Updates.combine(Updates.set(STATUS, LetterStatus.REPLAYED.stored()),
                        Updates.set(EDITED_BODY, new BsonBinary(edited)),
                        Updates.set(RESOLVED_AT, new BsonDateTime(clock.millis())), Updates.set(RESOLVED_BY, by)))
                .getModifiedCount() == 1;
    }

    /**
     * Letters of one kind that failed for one cause, in one queue.
     *
     * @param queue    the work queue
     * @param kind     their kind
     * @param reason   the first one's reason, without its subject
     * @param count    how many
     * @param entities up to three of the entities they name
     * @param oldest   the earliest dead-lettering among them
     * @param newest   the latest
     */
    public record Group(String queue, String kind, String reason, long count, List<String> entities, Instant oldest,
                        Instant newest) {
        /** Copies the list. */
        public Group {
            entities = List.copyOf(entities);
        }
    }

    /** The dead letters grouped by queue, kind and cause: the largest groups first. */
    public List<Group> groups() {
        List<Group> groups = new ArrayList<>();
        letters.aggregate(List.of(
                Aggregates.match(eq(STATUS, LetterStatus.DEAD.stored())),
                Aggregates.group(new BsonDocument(QUEUE, new BsonString("$" + QUEUE))
                                .append(KIND, new BsonString("$" + KIND)).append(CAUSE, new BsonString("$" + CAUSE)),
                        sum("count", 1), first("reason", "$" + SHOWN_REASON), min("oldest", "$" + AT),
                        max("newest", "$" + AT), addToSet("entities", "$" + ENTITY)),
                Aggregates.sort(Sorts.descending("count"))))
                // a flood's groups gather their entities: past MongoDB's 100 MB for a stage, spill to disk, not fail
                .allowDiskUse(true).forEach(doc -> {
                    BsonDocument key = doc.getDocument(ID);
                    List<String> entities = new ArrayList<>();
                    for (BsonValue entity : doc.getArray("entities", new BsonArray())) {
                        if (entity.isString() && entities.size() < 3) {
                            entities.add(entity.asString().getValue());
                        }
                    }
                    groups.add(new Group(key.getString(QUEUE).getValue(), key.getString(KIND).getValue(),
                            doc.getString("reason").getValue(), doc.getNumber("count").longValue(), entities,
                            Instant.ofEpochMilli(doc.getDateTime("oldest").getValue()),
                            Instant.ofEpochMilli(doc.getDateTime("newest").getValue())));
                });
        return groups;
    }

    /** How many letters of each queue were stored since {@code since}: how fast dead letters arrive. */
    public Map<String, Long> arrivals(Instant since) {
        Map<String, Long> arrivals = new LinkedHashMap<>();
        letters.aggregate(List.of(Aggregates.match(gte(STORED_AT, new BsonDateTime(since.toEpochMilli()))),
                        Aggregates.group("$" + QUEUE, sum("count", 1))))
                .forEach(doc -> arrivals.put(doc.getString(ID).getValue(), doc.getNumber("count").longValue()));
        return arrivals;
    }

    private Bson filter(LetterQuery query) {
        List<Bson> parts = new ArrayList<>();
        if (!query.ids().isEmpty()) {
            parts.add(in(ID, query.ids()));
        }
        if (!query.statuses().isEmpty()) {
            parts.add(in(STATUS, query.statuses().stream().map(LetterStatus::stored).toList()));
        }
        query.queue().ifPresent(queue -> parts.add(eq(QUEUE, queue)));
        query.kind().ifPresent(kind -> parts.add(eq(KIND, kind)));
        query.entity().ifPresent(entity -> parts.add(eq(ENTITY, entity)));
        query.reason().ifPresent(reason -> parts.add(regex(REASON, Pattern.quote(reason), "i")));
        Instant now = clock.instant();
        query.minAge().ifPresent(age -> parts.add(lte(AT, new BsonDateTime(now.minus(age).toEpochMilli()))));
        query.maxAge().ifPresent(age -> parts.add(gte(AT, new BsonDateTime(now.minus(age).toEpochMilli()))));
        return parts.isEmpty() ? new BsonDocument() : and(parts);
    }

    /** Letters after the cursor {@code at:id} in newest-first order. */
    private static Bson before(String cursor) {
        int colon = cursor.indexOf(':');
        long at;
        try {
            at = Long.parseLong(cursor.substring(0, Math.max(colon, 0)));
        } catch (NumberFormatException e) {
            throw new dev.orderless.InvalidInputException("after: not a cursor a page gave ('" + cursor + "')");
        }
        String id = cursor.substring(colon + 1);
        BsonDateTime time = new BsonDateTime(at);
        return or(lt(AT, time), and(eq(AT, time), lt(ID, id)));
    }

    private static StoredLetter letter(BsonDocument doc) {
        return new StoredLetter(doc.getString(ID).getValue(), doc.getString(QUEUE).getValue(),
                doc.getString(KIND).getValue(), doc.getString(REASON).getValue(),
                doc.getString(SHOWN_REASON).getValue(),
                doc.isString(ENTITY) ? Optional.of(doc.getString(ENTITY).getValue()) : Optional.empty(),
                doc.isNumber(SEQ) ? OptionalLong.of(doc.getNumber(SEQ).longValue()) : OptionalLong.empty(),
                Instant.ofEpochMilli(doc.getDateTime(AT).getValue()), doc.getBoolean(AT_KNOWN).getValue(),
                Instant.ofEpochMilli(doc.getDateTime(STORED_AT).getValue()), doc.getNumber(REPLAYS).longValue(),
                LetterStatus.of(doc.getString(STATUS).getValue()).orElse(LetterStatus.DEAD),
                doc.isDateTime(RESOLVED_AT) ? Optional.of(Instant.ofEpochMilli(doc.getDateTime(RESOLVED_AT).getValue()))
                        : Optional.empty(), doc.getNumber(BODY_BYTES).longValue(),
                doc.isString(HELD_IN) ? Optional.of(doc.getString(HELD_IN).getValue()) : Optional.empty());
    }
}
