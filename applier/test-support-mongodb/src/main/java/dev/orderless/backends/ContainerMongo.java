package dev.orderless.backends;

import java.util.Set;
import org.testcontainers.mongodb.MongoDBContainer;

/** A single-node MongoDB replica set in a container (needs a Docker engine; {@code -Ptestcontainers}). */
final class ContainerMongo implements MongoBackend {
    static final String IMAGE = "mongo:7.0";

    private final MongoDBContainer container;

    private ContainerMongo(MongoDBContainer container) {
        this.container = container;
    }

    static ContainerMongo start() {
        MongoDBContainer container = new MongoDBContainer(IMAGE).withReplicaSet();
        container.start();
        return new ContainerMongo(container);
    }

    @Override
    public Kind kind() {
        return Kind.CONTAINER;
    }

    @Override
    public String connectionString() {
        return container.getReplicaSetUrl();
    }

    @Override
    public Set<KnownDifference> knownDifferences() {
        return Set.of();
    }

    @Override
    public String description() {
        return IMAGE + " replica set in a container at " + container.getReplicaSetUrl();
    }

    @Override
    public void close() {
        container.stop();
    }
}
