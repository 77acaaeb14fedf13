package dev.orderless.lease;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.ManualClock;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lease as a distributed lock with fencing. Time is moved by hand; the background renewal is
 * scheduled far apart so that each test renews explicitly.
 */
@ExtendWith(MongoExtension.class)
class MongoLeaseTest {
    private static final Duration TTL = Duration.ofMinutes(2);

    private final ManualClock clock = new ManualClock();
    private MongoCollection<BsonDocument> leases;
    private LeaseProvider provider;

    @BeforeEach
    void setUp(MongoDatabase db) {
        leases = db.getCollection("leases", BsonDocument.class);
        provider = MongoLeaseProvider.create(leases, new LeaseOptions(TTL, Duration.ofMinutes(1), clock));
    }

    @Test
    void a_free_resource_is_acquired_with_the_first_fence() {
        Lease lease = provider.tryAcquire("r", "a").orElseThrow();

        assertThat(lease.fence()).isEqualTo(1);
        assertThat(lease.isHeld()).isTrue();
        assertThat(lease.position()).isEmpty();
    }

    @Test
    void a_held_lease_is_not_given_to_another_owner() {
        provider.tryAcquire("r", "a").orElseThrow();

        assertThat(provider.tryAcquire("r", "b")).isEmpty();
    }

    @Test
    void a_change_of_owner_raises_the_fence_and_the_old_holder_can_no_longer_commit() {
        Lease a = provider.tryAcquire("r", "a").orElseThrow();
        clock.advance(TTL.plusSeconds(1));

        Lease b = provider.tryAcquire("r", "b").orElseThrow();

        assertThat(b.fence()).isGreaterThan(a.fence());
        assertThat(a.commit(new BsonDocument("t", new BsonString("late")))).isFalse();
        assertThat(a.isHeld()).isFalse();
        assertThat(b.commit(new BsonDocument("t", new BsonString("b")))).isTrue();
    }

    @Test
    void the_same_owner_winning_back_an_expired_lease_gets_a_new_fence() {
        Lease first = provider.tryAcquire("r", "a").orElseThrow();
        clock.advance(TTL.plusSeconds(1));

        Lease again = provider.tryAcquire("r", "a").orElseThrow();

        assertThat(again.fence()).isEqualTo(first.fence() + 1);
        assertThat(first.commit(new BsonDocument())).as("the earlier incarnation is fenced off").isFalse();
    }

    @Test
    void release_unsets_the_owner_keeps_the_document_and_a_standby_takes_over_at_once() {
        Lease a = provider.tryAcquire("r", "a").orElseThrow();

        a.close();
        Lease b = provider.tryAcquire("r", "b").orElseThrow();

        assertThat(b.fence()).isEqualTo(2);
        assertThat(leases.countDocuments()).isEqualTo(1);
        assertThat(a.isHeld()).isFalse();
    }

    @Test
    void a_committed_position_is_handed_to_the_next_holder() {
        Lease a = provider.tryAcquire("r", "a").orElseThrow();
        a.commit(new BsonDocument("_data", new BsonString("token-7")));
        a.close();

        Optional<BsonDocument> position = provider.tryAcquire("r", "b").orElseThrow().position();

        assertThat(position).contains(new BsonDocument("_data", new BsonString("token-7")));
    }

    @Test
    void renewal_keeps_the_lease_while_the_worker_heartbeats() {
        MongoLease a = (MongoLease) provider.tryAcquire("r", "a").orElseThrow();
        for (int i = 0; i < 5; i++) {
            clock.advance(Duration.ofMinutes(1));
            a.heartbeat();
            a.renewIfAlive();
        }

        assertThat(a.isHeld()).isTrue();
        assertThat(provider.tryAcquire("r", "b")).isEmpty();
    }

    @Test
    void a_worker_without_heartbeats_lets_the_lease_lapse() {
        MongoLease a = (MongoLease) provider.tryAcquire("r", "a").orElseThrow();
        for (int i = 0; i < 3; i++) {
            clock.advance(Duration.ofMinutes(1));
            a.renewIfAlive();
        }

        assertThat(a.isHeld()).isFalse();
        assertThat(provider.tryAcquire("r", "b")).isPresent();
    }

    @Test
    void of_eight_racing_owners_exactly_one_gets_a_free_lease() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Optional<Lease>>> tries = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String owner = "o" + i;
                tries.add(pool.submit(() -> {
                    start.await();
                    return provider.tryAcquire("race", owner);
                }));
            }
            start.countDown();
            int winners = 0;
            for (Future<Optional<Lease>> t : tries) {
                winners += t.get(30, TimeUnit.SECONDS).isPresent() ? 1 : 0;
            }
            assertThat(winners).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }
}
