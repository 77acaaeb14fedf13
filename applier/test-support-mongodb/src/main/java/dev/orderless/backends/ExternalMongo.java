package dev.orderless.backends;

import com.mongodb.ConnectionString;
import java.util.Set;

/** A MongoDB named by a URI; assumed to be a real MongoDB (replica set for change streams). */
final class ExternalMongo implements MongoBackend {
    private final String uri;

    ExternalMongo(String uri) {
        try {
            new ConnectionString(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("MongoDB URI is not a valid connection string ("
                    + e.getMessage() + "); expected e.g. mongodb://localhost:27017/?replicaSet=rs0");
        }
        this.uri = uri;
    }

    @Override
    public Kind kind() {
        return Kind.EXTERNAL;
    }

    @Override
    public String connectionString() {
        return uri;
    }

    @Override
    public Set<KnownDifference> knownDifferences() {
        return Set.of();
    }

    @Override
    public String description() {
        return "MongoDB at " + new ConnectionString(uri).getHosts();
    }

    @Override
    public void close() {
        // not ours to stop
    }
}
