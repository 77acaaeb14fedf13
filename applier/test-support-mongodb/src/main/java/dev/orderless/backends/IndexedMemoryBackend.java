package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;

/**
 * mongo-java-server's in-memory backend whose databases are {@link IndexedMemoryDatabase}s: filters that
 * pin {@code _id} are served from the {@code _id} index, as on MongoDB, and the documents examined are
 * counted per collection. Its oplog, once enabled, is an {@link IndexedOplog}: a change stream's poll and
 * update lookup cost the same whatever the size of the oplog and of the collection. Every command passes its
 * {@link Pauses}, where a test can hold it ({@link EmbeddedMongo#pause}), and its {@link FailPoints}, where a test
 * fails it as a replica set does during an election ({@code configureFailPoint: "failCommand"}). The hooks are the
 * chain backend → database → collection and index, and the backend's oplog, through mongo-java-server's
 * protected factory methods; {@code EmbeddedMongoTest} and {@code EmbeddedChangeStreamTest} fail if an
 * upgrade breaks them.
 */
final class IndexedMemoryBackend extends MemoryBackend {
    private final Pauses pauses = new Pauses();
    private final FailPoints failPoints = new FailPoints();

    /** Every command passes the {@link Pauses} before the server runs it and after, before its reply is sent. */
    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        pauses.before(channel, command, query);
        if (command.equalsIgnoreCase("hello") || command.equalsIgnoreCase("isMaster")) {
            failPoints.handshake(channel, query);
        }
        if (FailPoints.answers(command)) {
            return failPoints.answer(databaseName, command, query);
        }
        FailPoints.Decision decision = failPoints.decide(channel, databaseName, command, query);
        switch (decision.action()) {
            case FAIL -> {
                return FailPoints.failure(decision.data());
            }
            case CLOSE_BEFORE -> {
                channel.close();   // the command does not run; the driver sees a network error
                return new Document("ok", 0.0);   // never sent: the connection is closed
            }
            default -> {
            }
        }
        Document response = run(channel, databaseName, command, query);
        return switch (decision.action()) {
            case RUN_THEN_ADD_WRITE_CONCERN_ERROR -> FailPoints.withWriteConcernError(decision.data(), response);
            case RUN_THEN_CLOSE -> {
                channel.close();   // applied, and the reply never leaves: a network error after the write
                yield response;
            }
            default -> response;
        };
    }

    private Document run(Channel channel, String databaseName, String command, Document query) {
        if (command.equalsIgnoreCase("hello")) {
            return hello(channel, databaseName, query);
        }
        Document response;
        try {
            response = super.handleCommand(channel, databaseName, command, query);
        } catch (RuntimeException e) {
            pauses.failed(channel, command, query, e);   // a command that failed is held after it too
            throw e;
        }
        return pauses.after(channel, command, query, response);
    }

    /**
     * MongoDB 4.4.2's name for {@code isMaster}, which mongo-java-server does not know: Spring Boot's MongoDB health
     * check sends it (and showed this server DOWN). The same answer as {@code isMaster}, with its newer field name.
     */
    private Document hello(Channel channel, String databaseName, Document query) {
        Document response = super.handleCommand(channel, databaseName, "ismaster", query);
        response.put("isWritablePrimary", response.getOrDefault("ismaster", Boolean.TRUE));
        return response;
    }

    @Override
    public void handleClose(Channel channel) {
        pauses.closed(channel);
        failPoints.closed(channel);
        super.handleClose(channel);
    }

    Pause pause(PausePoint point) {
        return pauses.arm(point);
    }

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new IndexedMemoryDatabase(databaseName, getCursorRegistry());
    }

    /** As mongo-java-server's, on {@code local.oplog.rs}, but indexed: see {@link IndexedOplog}. */
    @Override
    @SuppressWarnings("unchecked")
    protected Oplog createOplog() {
        MongoDatabase local = resolveDatabase("local");
        MongoCollection<Document> collection = (MongoCollection<Document>) local.resolveCollection(OPLOG_COLLECTION_NAME, false);
        if (collection == null) {
            collection = (MongoCollection<Document>) local.createCollectionOrThrowIfExists(OPLOG_COLLECTION_NAME);
        }
        return new IndexedOplog(collection, namespace -> existing(Utils.getDatabaseNameFromFullName(namespace),
                Utils.getCollectionNameFromFullName(namespace)), getClock(), getCursorRegistry());
    }

    /** Documents examined by queries on {@code database.collection} since it was created; 0 if it does not exist. */
    long documentsExamined(String database, String collection) {
        return existing(database, collection) instanceof CountingMemoryCollection counting ? counting.documentsExamined() : 0;
    }

    /** Oplog entries that change-stream polls have read; 0 while the oplog is not enabled. */
    long oplogEntriesRead() {
        return oplog instanceof IndexedOplog indexed ? indexed.entriesRead() : 0;
    }

    /** {@code database.collection}, or null if either does not exist; never creates them. */
    private MongoCollection<?> existing(String database, String collection) {
        if (!listDatabaseNames().contains(database)) {
            return null;   // resolving it would create it
        }
        return resolveDatabase(database).resolveCollection(collection, false);
    }
}
