package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.AbstractCursor;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.oplog.Oplog;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * The embedded server's oplog, whose change streams cost what they deliver, not what the server holds.
 * mongo-java-server's own ({@code CollectionBackedOplog}) reads its whole oplog collection on every poll
 * of every change stream, idle or not, and looks up each updated document ({@code fullDocument:
 * updateLookup}) by reading the whole collection; a stream falls behind as either grows. This one writes
 * the same entries to {@code local.oplog.rs} (what a {@code find} there sees, as before) and keeps them
 * also in one map per namespace, ordered by timestamp.
 *
 * <p>A write ({@link #handleInsert}, {@link #handleUpdate}, {@link #handleDelete},
 * {@link #handleDropCollection}):
 * <ol>
 *   <li>Under one lock for the whole oplog: give each entry the next timestamp (the clock's second and a
 *       counter, as mongo-java-server does, but never below the previous entry's, whatever the clock does),
 *       append it to {@code local.oplog.rs} and to its namespace's map.
 *   <li>Then publish the newest timestamp as the horizon. Entries are appended in timestamp order, so every
 *       entry up to the horizon is in its map: a reader bounded by the horizon sees no gap, however its
 *       reads of two maps interleave with writes.
 * </ol>
 * A poll of a change stream on {@code db.coll} ({@link ChangeStreamCursor#takeDocuments}):
 * <ol>
 *   <li>Read the horizon, then the entries after the cursor's position and up to the horizon of
 *       {@code db.coll} and of {@code db.$cmd} (drops), merged in timestamp order: a lookup in each map,
 *       then only the entries read.
 *   <li>Make each entry its event, exactly as mongo-java-server does (same fields, same resume token,
 *       same known differences), except the update lookup: the document is found through the collection's
 *       {@code _id} index ({@link IdLookupIndex}) and copied under the collection's lock; a document that
 *       is gone gives no full document ({@code null}), as on MongoDB, where mongo-java-server gave the
 *       update's {@code $set} fields.
 *   <li>Run the stream's pipeline on the event; stop once the batch is full.
 *   <li>Move the position past the last entry read, or to the horizon when none is left, so that entries
 *       the pipeline filtered out are not read again (MongoDB's post-batch position does the same).
 * </ol>
 * So an idle poll costs two map lookups, and an event its entry plus, for an update lookup, one document.
 * Opening a stream: {@code startAfter} and {@code resumeAfter} start after the token's entry,
 * {@code startAtOperationTime} at that time (inclusive), otherwise after the horizon; {@code resumeAfter}
 * a drop of the collection gives the invalidate event, as mongo-java-server's does. Entries are kept for
 * the server's lifetime, as before; entries {@code local.oplog.rs} held before this oplog was created are
 * not replayed (the embedded server creates it at start, on an empty collection).
 */
final class IndexedOplog implements Oplog {
    private static final String TS = "ts";
    private static final String OP = "op";
    private static final String NS = "ns";
    private static final String O = "o";
    private static final String O2 = "o2";
    private static final String WALL = "wall";
    private static final String ID = "_id";
    private static final String DATA = "_data";
    private static final String FULL_DOCUMENT = "fullDocument";

    /** A collection of this server by namespace, or null when it does not exist (without creating it). */
    @FunctionalInterface
    interface CollectionFinder {
        MongoCollection<?> existing(String namespace);
    }

    private final MongoCollection<Document> collection;
    private final CollectionFinder collections;
    private final Clock clock;
    private final CursorRegistry cursorRegistry;
    private final UUID ui = UUID.randomUUID();
    private final Map<String, NavigableMap<Long, Document>> byNamespace = new ConcurrentHashMap<>();
    private final Object writeLock = new Object();
    private final LongAdder entriesRead = new LongAdder();
    /** Under {@link #writeLock}. */
    private int counter;
    /** The newest entry's timestamp whose entry, and every older one, is in its map; 0 for none. */
    private volatile long horizon;

    /** {@code collection} is {@code local.oplog.rs}, where the entries are also written. */
    IndexedOplog(MongoCollection<Document> collection, CollectionFinder collections, Clock clock,
                 CursorRegistry cursorRegistry) {
        this.collection = collection;
        this.collections = collections;
        this.clock = clock;
        this.cursorRegistry = cursorRegistry;
    }

    /** Oplog entries that change-stream polls have read, since the start: what the streams cost. */
    long entriesRead() {
        return entriesRead.sum();
    }

    @Override
    public void handleInsert(String namespace, List<Document> documents) {
        if (isOplogCollection(namespace)) {
            return;
        }
        append(namespace, documents.stream()
                .map(document -> entry("i", namespace).append(O, document.cloneDeeply()))
                .toList());
    }

    @Override
    public void handleUpdate(String namespace, Document selector, Document query, List<Object> modifiedIds) {
        if (isOplogCollection(namespace)) {
            return;
        }
        append(namespace, modifiedIds.stream()
                .map(id -> entry("u", namespace).append(O, query).append(O2, new Document(ID, id)))
                .toList());
    }

    @Override
    public void handleDelete(String namespace, Document query, List<Object> deletedIds) {
        if (isOplogCollection(namespace)) {
            return;
        }
        append(namespace, deletedIds.stream()
                .map(id -> entry("d", namespace).append(O, new Document(ID, id)))
                .toList());
    }

    @Override
    public void handleDropCollection(String namespace) {
        if (isOplogCollection(namespace)) {
            return;
        }
        String commands = commandNamespace(namespace);
        append(commands, List.of(entry("c", commands)
                .append(O, new Document("drop", Utils.getCollectionNameFromFullName(namespace)))));
    }

    @Override
    public Cursor createCursor(Document changeStreamDocument, String namespace, Aggregation aggregation) {
        Document startAfter = (Document) changeStreamDocument.get("startAfter");
        Document resumeAfter = (Document) changeStreamDocument.get("resumeAfter");
        BsonTimestamp startAtOperationTime = (BsonTimestamp) changeStreamDocument.get("startAtOperationTime");
        Position start;
        if (startAfter != null) {
            start = Position.after(tokenValue(startAfter));
        } else if (resumeAfter != null) {
            long token = tokenValue(resumeAfter);
            if (droppedBy(namespace, token)) {
                return new Invalidated(token);
            }
            start = Position.after(token);
        } else if (startAtOperationTime != null) {
            start = Position.at(startAtOperationTime.getValue());
        } else {
            start = Position.after(horizon);
        }
        ChangeStreamCursor cursor = new ChangeStreamCursor(cursorRegistry.generateCursorId(), namespace,
                changeStreamDocument, aggregation, start);
        cursorRegistry.add(cursor);
        return cursor;
    }

    /** Stamps, appends and publishes {@code entries} of {@code namespace}; see the class comment. */
    private void append(String namespace, List<Document> entries) {
        if (entries.isEmpty()) {
            return;
        }
        NavigableMap<Long, Document> log = logOf(namespace);
        synchronized (writeLock) {
            Instant now = clock.instant();
            long newest = horizon;
            for (Document entry : entries) {
                long stamped = new BsonTimestamp(now, ++counter).getValue();
                // never at or before the previous entry: the maps and every cursor's position rely on
                // entries arriving in timestamp order, and a clock may step back
                newest = Long.compareUnsigned(stamped, newest) > 0 ? stamped : newest + 1;
                entry.put(TS, new BsonTimestamp(newest));
                entry.put(WALL, now);
            }
            // first the collection: it adds an _id to each entry, which no reader may see half done
            collection.addDocuments(entries.stream());
            for (Document entry : entries) {
                log.put(timestamp(entry), entry);
            }
            horizon = newest;
        }
    }

    /** An entry's fields in mongo-java-server's order; timestamp and wall time are set when it is appended. */
    private Document entry(String op, String namespace) {
        return new Document()
                .append(TS, null)
                .append("t", 1L)
                .append("h", 0L)
                .append("v", 2L)
                .append(OP, op)
                .append(NS, namespace)
                .append("ui", ui)
                .append(WALL, null);
    }

    /** Whether {@code db.$cmd} holds a drop of {@code namespace}'s collection at or before {@code token}. */
    private boolean droppedBy(String namespace, long token) {
        Document drop = new Document("drop", Utils.getCollectionNameFromFullName(namespace));
        return logOf(commandNamespace(namespace)).headMap(token, true).values().stream()
                .anyMatch(entry -> "c".equals(entry.get(OP)) && drop.equals(entry.get(O)));
    }

    /** The entries of {@code namespace} and of its database's commands after {@code from}, up to {@code to}. */
    private Iterator<Document> entries(String namespace, Position from, long to) {
        NavigableMap<Long, Document> own = from.upTo(logOf(namespace), to);
        String commands = commandNamespace(namespace);
        if (commands.equals(namespace)) {
            return own.values().iterator();
        }
        return new Merged(own, from.upTo(logOf(commands), to));
    }

    private NavigableMap<Long, Document> logOf(String namespace) {
        return byNamespace.computeIfAbsent(namespace, n -> new ConcurrentSkipListMap<>(Long::compareUnsigned));
    }

    private static String commandNamespace(String namespace) {
        return Utils.getDatabaseNameFromFullName(namespace) + ".$cmd";
    }

    private boolean isOplogCollection(String namespace) {
        return collection.getFullName().equals(namespace);
    }

    private static long timestamp(Document entry) {
        return ((BsonTimestamp) entry.get(TS)).getValue();
    }

    private static long tokenValue(Document token) {
        return Long.parseUnsignedLong((String) token.get(DATA), 16);
    }

    private static Document token(long timestamp) {
        return new Document(DATA, Long.toHexString(timestamp));
    }

    /** The change event of {@code entry}, as mongo-java-server makes it but for the update lookup. */
    private Document event(Document entry, Document changeStreamDocument) {
        BsonTimestamp timestamp = (BsonTimestamp) entry.get(TS);
        Document id = token(timestamp.getValue());
        Document o = (Document) entry.get(O);
        String op = (String) entry.get(OP);
        if (op.equals("c")) {
            String command = o.keySet().stream().findFirst()
                    .orElseThrow(() -> new MongoServerException("Unspecified command operation type"));
            return new Document(ID, id).append("operationType", command).append("clusterTime", timestamp);
        }
        String operationType;
        Document fullDocument;
        Document documentKey;
        switch (op) {
            case "i" -> {
                operationType = "insert";
                fullDocument = o;
                documentKey = new Document(ID, o.get(ID));
            }
            case "d" -> {
                operationType = "delete";
                fullDocument = null;
                documentKey = o;
            }
            case "u" -> {
                operationType = "update";
                fullDocument = "updateLookup".equals(changeStreamDocument.get(FULL_DOCUMENT))
                        ? current((String) entry.get(NS), ((Document) entry.get(O2)).get(ID))
                        : delta(o);
                documentKey = o;   // mongo-java-server's: the update itself (KnownDifference.UPDATE_EVENT_DOCUMENT_KEY_WRONG)
            }
            default -> throw new IllegalArgumentException("Unexpected operation type: " + op);
        }
        return new Document()
                .append(ID, id)
                .append("operationType", operationType)
                .append(FULL_DOCUMENT, fullDocument)
                .append("documentKey", documentKey)
                .append("clusterTime", timestamp);
    }

    /**
     * The document now, found by {@code _id} through the collection's index (one document examined), or
     * null when it or its collection is gone, as MongoDB's update lookup gives. A copy taken under the
     * collection's monitor, which its writes hold: the event is encoded after this returns, and the stored
     * document may change meanwhile.
     */
    private Document current(String namespace, Object id) {
        MongoCollection<?> found = collections.existing(namespace);
        if (found == null) {
            return null;
        }
        synchronized (found) {
            for (Document document : found.handleQuery(new Document(ID, id), 0, 1)) {
                return document.cloneDeeply();
            }
        }
        return null;
    }

    /** Without the lookup, the fields the update set or unset, as mongo-java-server gives. */
    private static Document delta(Document update) {
        Document delta = new Document();
        if (update.containsKey("$set")) {
            delta.appendAll((Document) update.get("$set"));
        }
        if (update.containsKey("$unset")) {
            delta.appendAll((Document) update.get("$unset"));
        }
        return delta;
    }

    /** Where a cursor is: entries after {@code timestamp}, or from it when {@code inclusive}. */
    private record Position(long timestamp, boolean inclusive) {
        static Position after(long timestamp) {
            return new Position(timestamp, false);
        }

        static Position at(long timestamp) {
            return new Position(timestamp, true);
        }

        /** The entries of {@code log} from this position up to {@code to}, inclusive. */
        NavigableMap<Long, Document> upTo(NavigableMap<Long, Document> log, long to) {
            int order = Long.compareUnsigned(timestamp, to);
            if (order > 0 || order == 0 && !inclusive) {
                return Collections.emptyNavigableMap();   // nothing yet (a start in the future)
            }
            return log.subMap(timestamp, inclusive, to, true);
        }

        /** This position, or after {@code to} when that is later. */
        Position atLeastAfter(long to) {
            int order = Long.compareUnsigned(timestamp, to);
            return order < 0 || order == 0 && inclusive ? after(to) : this;
        }
    }

    /** A change stream on one namespace; see the class comment for a poll. */
    private final class ChangeStreamCursor extends AbstractCursor {
        private final String namespace;
        private final Document changeStreamDocument;
        private final Aggregation aggregation;
        private Position position;

        ChangeStreamCursor(long id, String namespace, Document changeStreamDocument, Aggregation aggregation,
                           Position start) {
            super(id);
            this.namespace = namespace;
            this.changeStreamDocument = changeStreamDocument;
            this.aggregation = aggregation;
            this.position = start;
        }

        @Override
        public boolean isEmpty() {
            return false;   // a change stream stays open until it is killed
        }

        @Override
        public synchronized List<Document> takeDocuments(int numberToReturn) {
            long to = horizon;
            List<Document> batch = new ArrayList<>();
            Position next = position;
            boolean full = false;
            Iterator<Document> entries = entries(namespace, position, to);
            while (entries.hasNext() && !full) {
                Document entry = entries.next();
                entriesRead.increment();
                // the stages a change stream takes ($match, $project, $set, ...) act on one event at a time
                batch.addAll(aggregation.runStages(Stream.of(event(entry, changeStreamDocument))));
                next = Position.after(timestamp(entry));
                full = numberToReturn > 0 && batch.size() >= numberToReturn;
            }
            // moved only once the batch is made: a failure on the way loses no event
            position = full ? next : next.atLeastAfter(to);
            return batch;
        }
    }

    /** What {@code resumeAfter} a drop of the collection gives: the invalidate event, and no cursor. */
    private static final class Invalidated extends AbstractCursor {
        private final long token;

        Invalidated(long token) {
            super(0);
            this.token = token;
        }

        @Override
        public boolean isEmpty() {
            return false;
        }

        @Override
        public List<Document> takeDocuments(int numberToReturn) {
            return List.of(new Document(ID, token(token)).append("operationType", "invalidate"));
        }
    }

    /** Two maps' entries merged in timestamp order (they share no timestamp). */
    private static final class Merged implements Iterator<Document> {
        private final Iterator<Map.Entry<Long, Document>> left;
        private final Iterator<Map.Entry<Long, Document>> right;
        private Map.Entry<Long, Document> nextLeft;
        private Map.Entry<Long, Document> nextRight;

        Merged(NavigableMap<Long, Document> left, NavigableMap<Long, Document> right) {
            this.left = left.entrySet().iterator();
            this.right = right.entrySet().iterator();
            this.nextLeft = advance(this.left);
            this.nextRight = advance(this.right);
        }

        @Override
        public boolean hasNext() {
            return nextLeft != null || nextRight != null;
        }

        @Override
        public Document next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            boolean fromLeft = nextRight == null
                    || nextLeft != null && Long.compareUnsigned(nextLeft.getKey(), nextRight.getKey()) < 0;
            Document entry;
            if (fromLeft) {
                entry = nextLeft.getValue();
                nextLeft = advance(left);
            } else {
                entry = nextRight.getValue();
                nextRight = advance(right);
            }
            return entry;
        }

        private static Map.Entry<Long, Document> advance(Iterator<Map.Entry<Long, Document>> entries) {
            return entries.hasNext() ? entries.next() : null;
        }
    }
}
