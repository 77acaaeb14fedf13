package dev.orderless.backends;

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
    /**
     * The server's threads (started as connections come): a new connection gets the one that serves the fewest
     * open connections, so each has one of its own while there are fewer, and a {@link #pause held} command holds
     * no other connection ({@link EmbeddedServer}). (mongo-java-server alone has two per core, handed out round
     * robin.)
     */
    static final int SERVER_THREADS = 32;
    private final IndexedMemoryBackend backend;
    private final EmbeddedServer server;
    private final String connectionString;

    private EmbeddedMongo(int port) {
        this.backend = new IndexedMemoryBackend();
        backend.enableOplog();
        InetSocketAddress address;
        try {
            server = EmbeddedServer.bind(backend,
                    port == 0 ? new InetSocketAddress("localhost", 0) : new InetSocketAddress("127.0.0.1", port), SERVER_THREADS);
            address = server.address();
        } catch (Exception e) {   // netty throws java.net.BindException unchecked
            backend.close();
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

    /**
     * Arms a pause: the first command that matches {@code point} is held there until the returned
     * {@link Pause} is released (or closed, or {@link PausePoint#holdAtMost()} passes). A test forces an
     * interleaving with it instead of hoping for one: an update held until a concurrent read has returned
     * ({@link PausePoint#before}), or a read's result held while another write lands
     * ({@link PausePoint#after}). Reads return snapshots taken under the collection's lock, as on MongoDB, so a
     * read held after it ran returns the document as it was when it ran.
     *
     * <p>The command waits on the server thread that serves its connection. Each connection has one of its own
     * while the server has fewer than {@value #SERVER_THREADS} open connections; beyond that a command whose thread
     * serves another open connection is not held, and {@link Pause#awaitHeld} says so. So pause on a server of the
     * test's own ({@link #start()}), not on one a whole test run shares.
     */
    public Pause pause(PausePoint point) {
        return backend.pause(point);
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
        server.close();
    }
}
