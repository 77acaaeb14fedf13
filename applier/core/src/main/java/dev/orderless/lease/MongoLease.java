package dev.orderless.lease;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.set;
import static com.mongodb.client.model.Updates.unset;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import java.time.Instant;
import java.util.Date;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease held in a {@link MongoLeaseProvider}'s collection. Every write to the lease document (renew,
 * commit, release) goes through one lock and is guarded by owner and fence, so renewal and processing
 * never race on the lease state, and a holder that lost the lease can no longer change it.
 */
final class MongoLease implements Lease {
    private static final Logger log = LoggerFactory.getLogger(MongoLease.class);

    private final MongoCollection<BsonDocument> leases;
    private final LeaseOptions options;
    private final String resource;
    private final String owner;
    private final long fence;
    private final Optional<BsonDocument> position;
    private final ScheduledExecutorService renewer;
    private final Object writes = new Object();
    private volatile Instant heldUntil;
    private volatile Instant lastHeartbeat;
    private volatile boolean lost;

    private MongoLease(MongoCollection<BsonDocument> leases, LeaseOptions options, String resource, String owner,
                       long fence, Optional<BsonDocument> position, Instant acquiredAt) {
        this.leases = leases;
        this.options = options;
        this.resource = resource;
        this.owner = owner;
        this.fence = fence;
        this.position = position;
        this.heldUntil = localExpiry(acquiredAt);
        this.lastHeartbeat = acquiredAt;
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lease-renewal-" + resource);
            t.setDaemon(true);
            return t;
        });
    }

    static MongoLease start(MongoCollection<BsonDocument> leases, LeaseOptions options, String resource, String owner,
                            long fence, Optional<BsonDocument> position, Instant acquiredAt) {
        MongoLease lease = new MongoLease(leases, options, resource, owner, fence, position, acquiredAt);
        long every = options.renewEvery().toMillis();
        lease.renewer.scheduleWithFixedDelay(lease::renewIfAlive, every, every, TimeUnit.MILLISECONDS);
        log.info("lease '{}' acquired by {} with fence {}", resource, owner, fence);
        return lease;
    }

    @Override
    public String resource() {
        return resource;
    }

    @Override
    public String owner() {
        return owner;
    }

    @Override
    public long fence() {
        return fence;
    }

    @Override
    public Optional<BsonDocument> position() {
        return position.map(BsonDocument::clone);
    }

    @Override
    public void heartbeat() {
        lastHeartbeat = options.clock().instant();
    }

    @Override
    public boolean isHeld() {
        return !lost && options.clock().instant().isBefore(heldUntil);
    }

    @Override
    public boolean commit(BsonDocument committed) {
        Instant now = options.clock().instant();
        return guardedWrite("commit", now, combine(set(LeaseFields.POSITION, committed),
                set(LeaseFields.POSITION_AT, Date.from(now)),
                set(LeaseFields.EXPIRES_AT, Date.from(now.plus(options.ttl())))));
    }

    @Override
    public boolean verify() {
        try {
            BsonDocument doc = leases.find(mine()).first();
            if (doc == null) {
                markLost("verify");
                return false;
            }
            return !lost;
        } catch (MongoException e) {
            return isHeld();
        }
    }

    @Override
    public void close() {
        renewer.shutdownNow();
        synchronized (writes) {
            if (!lost) {
                try {
                    leases.updateOne(mine(), combine(unset(LeaseFields.OWNER),
                            set(LeaseFields.EXPIRES_AT, Date.from(Instant.EPOCH))));
                    log.info("lease '{}' released by {} (fence {})", resource, owner, fence);
                } catch (MongoException e) {
                    log.warn("lease '{}' not released ({}); it expires by itself", resource, e.getMessage());
                }
            }
            lost = true;
        }
    }

    @Override
    public void abandon() {
        renewer.shutdownNow();
        lost = true;
    }

    /** One renewal, if the worker showed signs of life within the last half ttl. */
    void renewIfAlive() {
        Instant now = options.clock().instant();
        if (lost) {
            return;
        }
        if (lastHeartbeat.plus(options.ttl().dividedBy(2)).isBefore(now)) {
            log.warn("lease '{}': no heartbeat from the worker since {}; not renewing", resource, lastHeartbeat);
            return;
        }
        guardedWrite("renew", now, set(LeaseFields.EXPIRES_AT, Date.from(now.plus(options.ttl()))));
    }

    private boolean guardedWrite(String what, Instant now, Bson update) {
        synchronized (writes) {
            if (lost) {
                return false;
            }
            try {
                if (leases.updateOne(mine(), update).getMatchedCount() == 0) {
                    markLost(what);
                    return false;
                }
                heldUntil = localExpiry(now);
                return true;
            } catch (MongoException e) {
                log.warn("lease '{}' {} failed ({}); held locally until {}", resource, what, e.getMessage(), heldUntil);
                return false;
            }
        }
    }

    private void markLost(String when) {
        if (!lost) {
            lost = true;
            log.warn("lease '{}' lost by {} (fence {}), noticed on {}", resource, owner, fence, when);
        }
    }

    private Bson mine() {
        return and(eq(LeaseFields.ID, resource), eq(LeaseFields.OWNER, owner), eq(LeaseFields.FENCE, fence));
    }

    /** Held locally until one renewal period before the stored expiry: a margin for clock drift. */
    private Instant localExpiry(Instant renewedAt) {
        return renewedAt.plus(options.ttl()).minus(options.renewEvery());
    }
}
