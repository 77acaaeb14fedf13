package dev.orderless.view;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.lease.Lease;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * A term's lease and the position it commits there: a term goes on only while it holds the lease
 * ({@link #alive}), and commits only while owner and fence still match ({@link #commit}). A position
 * carries the source's uuid, checked against the committed one ({@link SourceIdentity}), and the cluster
 * time of the last event handled. Confined to the term's thread.
 */
final class TermLease {
    private final Lease lease;
    private final MongoDatabase database;
    private final MongoCollection<BsonDocument> source;
    private final String resource;
    private final FeederMetrics metrics;
    private Optional<BsonValue> sourceUuid = Optional.empty();
    private Optional<BsonValue> committedUuid = Optional.empty();
    private Optional<BsonTimestamp> lastClusterTime = Optional.empty();
    private boolean committedAny;

    TermLease(Lease lease, MongoDatabase database, MongoCollection<BsonDocument> source, String resource,
              FeederMetrics metrics) {
        this.lease = lease;
        this.database = database;
        this.source = source;
        this.resource = resource;
        this.metrics = metrics;
    }

    /**
     * The position the previous holder committed, if any; stops with {@link FeederStoppedException} if it
     * belongs to another source collection (dropped and recreated since).
     */
    Optional<Position> begin() {
        Optional<Position> stored = lease.position().map(Position::read);
        sourceUuid = SourceIdentity.uuid(database, source.getNamespace().getCollectionName());
        committedUuid = stored.flatMap(Position::source);
        SourceIdentity.requireSame(resource, source, committedUuid, sourceUuid, lease);
        lastClusterTime = stored.flatMap(Position::clusterTime);
        return stored;
    }

    /** Renews the lease; throws {@link LeaseLostException} if it is no longer held. */
    void alive(String when) {
        lease.heartbeat();
        if (!lease.isHeld()) {
            throw new LeaseLostException(when);
        }
    }

    /** Commits the position at {@code token}; throws {@link LeaseLostException} if owner or fence changed. */
    void commit(BsonDocument token, String when) {
        if (!lease.commit(position(token))) {
            throw new LeaseLostException(when);
        }
        metrics.commit();
        committedAny = true;
    }

    /** On a clean stop: commits the position at {@code token} for the successor, if the lease is still held. */
    void commitForSuccessor(BsonDocument token) {
        if (lease.isHeld() && lease.commit(position(token))) {
            metrics.commit();
        }
    }

    /** An event written at {@code clusterTime} was handled: the next position carries it. */
    void eventAt(BsonTimestamp clusterTime) {
        lastClusterTime = Optional.of(clusterTime);
    }

    /** The cluster time of the last change handled, or of the committed position's. */
    Optional<BsonTimestamp> lastClusterTime() {
        return lastClusterTime;
    }

    /** True once this term committed a position: it made progress. */
    boolean committedAny() {
        return committedAny;
    }

    long fence() {
        return lease.fence();
    }

    /** What an operator does once the source was dropped or recreated. */
    String whatToDo() {
        return SourceIdentity.whatToDo(resource, lease);
    }

    private BsonDocument position(BsonDocument token) {
        if (sourceUuid.isEmpty()) {   // the source did not exist yet when the term began
            sourceUuid = SourceIdentity.uuid(database, source.getNamespace().getCollectionName());
            SourceIdentity.requireSame(resource, source, committedUuid, sourceUuid, lease);
        }
        return new Position(token, sourceUuid, lastClusterTime).toDocument();
    }
}
