package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;

/**
 * mongo-java-server in this JVM, in memory, on a free loopback port, with its oplog enabled so that
 * change streams work. Its differences from MongoDB are listed in {@link #knownDifferences()} and
 * pinned by the conformance suite.
 */
public final class EmbeddedMongo implements MongoBackend {
    private final MongoServer server;
    private final String connectionString;

    private EmbeddedMongo() {
        this.server = new MongoServer(new MemoryBackend());
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

    @Override
    public String description() {
        return "embedded mongo-java-server at " + connectionString;
    }

    @Override
    public void close() {
        server.shutdownNow();
    }
}
