package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoServer;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;

/**
 * mongo-java-server in this JVM, in memory, on a free loopback port, with its oplog enabled so that
 * change streams work. Its differences from MongoDB are listed in {@link #knownDifferences()} and
 * pinned by the conformance suite.
 *
 * <p>One difference is removed rather than listed: a filter that pins {@code _id} (every guarded filter:
 * {@code _id} plus guard clauses) is served from the {@code _id} index and examines one document, as on
 * MongoDB, where mongo-java-server alone scans the whole collection ({@link IdLookupIndex}). So the cost
 * of an op here does not grow with the collection, and {@link #documentsExamined} shows it.
 */
public final class EmbeddedMongo implements MongoBackend {
    private final IndexedMemoryBackend backend;
    private final MongoServer server;
    private final String connectionString;

    private EmbeddedMongo() {
        this.backend = new IndexedMemoryBackend();
        this.server = new MongoServer(backend);
        server.enableOplog();
        InetSocketAddress address = server.bind();
        this.connectionString = "mongodb://" + address.getHostString() + ":" + address.getPort();
    }

    public static EmbeddedMongo start() {
        return new EmbeddedMongo();
    }

    @Override
    public Kind kind() {
        return Kind.EMBEDDED;
    }

    @Override
    public String connectionString() {
        return connectionString;
    }

    @Override
    public Set<KnownDifference> knownDifferences() {
        return EnumSet.allOf(KnownDifference.class);
    }

    /**
     * Documents that queries (finds, counts, updates, deletes) on {@code database.collection} have examined
     * since the collection was created: the candidates from an index, or the whole collection on a scan;
     * what MongoDB's {@code explain} calls {@code totalDocsExamined}. 0 for a collection that does not exist.
     */
    public long documentsExamined(String database, String collection) {
        return backend.documentsExamined(database, collection);
    }

    @Override
    public String description() {
        return "embedded mongo-java-server at " + connectionString;
    }

    @Override
    public void close() {
        server.shutdownNow();
    }
}
