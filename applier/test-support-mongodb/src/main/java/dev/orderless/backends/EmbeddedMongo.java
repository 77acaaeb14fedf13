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
 *
 * <p>Nor does the cost of a change stream ({@link IndexedOplog}): mongo-java-server alone reads its whole
 * oplog on every poll, idle or not, and the whole collection for each update lookup, so a view feeder fell
 * behind as they grew. Here a poll reads only the entries it delivers, and an update lookup examines one
 * document.
 */
public final class EmbeddedMongo implements MongoBackend {
    private final IndexedMemoryBackend backend;
    private final MongoServer server;
    private final String connectionString;

    private EmbeddedMongo(int port) {
        this.backend = new IndexedMemoryBackend();
        this.server = new MongoServer(backend);
        server.enableOplog();
        InetSocketAddress address;
        try {
            if (port == 0) {
                address = server.bind();
            } else {
                server.bind("127.0.0.1", port);
                address = new InetSocketAddress("127.0.0.1", port);
            }
        } catch (Exception e) {   // netty throws java.net.BindException unchecked
            server.shutdownNow();
            throw new IllegalStateException("embedded MongoDB cannot listen on 127.0.0.1:" + port
                    + " (is the port in use?): choose another port, or 0 for any free one");
        }
        this.connectionString = "mongodb://" + address.getHostString() + ":" + address.getPort();
    }

    /** On a free loopback port. */
    public static EmbeddedMongo start() {
        return new EmbeddedMongo(0);
    }

    /** On {@code 127.0.0.1:port} ({@code 0}: any free port); a port in use is an {@link IllegalStateException}. */
    public static EmbeddedMongo start(int port) {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be between 0 and 65535, was " + port);
        }
        return new EmbeddedMongo(port);
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

    /** Oplog entries that change-stream polls have read since the start; what the streams cost. */
    long oplogEntriesRead() {
        return backend.oplogEntriesRead();
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
