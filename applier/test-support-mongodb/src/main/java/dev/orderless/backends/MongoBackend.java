package dev.orderless.backends;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.util.Set;
import java.util.UUID;

/**
 * A MongoDB to talk to: a real one named by a URI, a replica set in a container, or the embedded
 * in-JVM server. Obtain one with {@link Backends#mongo()}; close it when done (closing an external
 * backend closes nothing on the server).
 */
public interface MongoBackend extends AutoCloseable {

    /** How the backend was provided. */
    enum Kind {
        /** {@code MONGODB_URI}: whatever the URI names (a real MongoDB, presumably). */
        EXTERNAL,
        /** {@code -Ptestcontainers}: a single-node MongoDB replica set in a container. */
        CONTAINER,
        /** Default: mongo-java-server in this JVM, with its oplog enabled for change streams. */
        EMBEDDED
    }

    Kind kind();

    /** A connection string for the MongoDB driver. */
    String connectionString();

    /** Where this backend deviates from a real MongoDB, as pinned by the conformance suite. */
    Set<KnownDifference> knownDifferences();

    /** A one-line description for logs and reports, e.g. {@code embedded mongo-java-server 1.47 at ...}. */
    String description();

    default MongoClient newClient() {
        return MongoClients.create(connectionString());
    }

    /**
     * A database name no earlier run has used, so tests against a shared server do not see each other's
     * data: {@code prefix} plus a random suffix, within MongoDB's 63-byte limit.
     */
    static String freshDatabaseName(String prefix) {
        String safe = prefix.replaceAll("[^A-Za-z0-9_]", "_");
        if (safe.length() > 40) {
            safe = safe.substring(0, 40);
        }
        return safe + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    @Override
    void close();
}
