package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two feeders and a source under continuous writes: the active one is killed (no release), the standby
 * takes over, and later it is shut down (released) and a new one takes over at once. The view ends equal
 * to the projection of the final source documents, and every roster entry carries its student's final
 * version: no change was skipped.
 */
@ExtendWith(MongoExtension.class)
class FailoverUnderLoadTest {

    @Test
    void a_killed_and_then_a_shut_down_feeder_skip_no_change(MongoDatabase db) throws Exception {
        long seed = Long.getLong("orderless.seed", System.nanoTime());
        try (ViewFixture f = new ViewFixture(db)) {
            AtomicBoolean writing = new AtomicBoolean(true);
            AtomicLong writes = new AtomicLong();
            Thread writer = f.writer(writing, seed, writes);
            SimpleMeterRegistry metersA = new SimpleMeterRegistry();
            SimpleMeterRegistry metersB = new SimpleMeterRegistry();
            ViewFeeder a = f.start(f.options("a"), ViewFixture::rosterOps, metersA);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> a.state() == ViewFeeder.State.ACTIVE);
            ViewFeeder b = f.start(f.options("b"), ViewFixture::rosterOps, metersB);
            writer.start();
            try {
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> events(metersA) >= 200);

                a.halt();   // killed: it keeps its lease until the lease lapses
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> b.state() == ViewFeeder.State.ACTIVE);
                double bAtTakeover = events(metersB);
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> events(metersB) >= bAtTakeover + 200);
            } finally {
                writing.set(false);
                writer.join(Duration.ofSeconds(30).toMillis());
            }
            f.awaitViewMatchesSource();

            b.close();   // shut down: released, so a new feeder takes over at once
            BsonDocument lease = db.getCollection("leases", BsonDocument.class).find().first();
            assertThat(lease.containsKey("owner")).as("released").isFalse();
            f.enroll("s-late", "C1");
            SimpleMeterRegistry metersC = new SimpleMeterRegistry();
            ViewFeeder c = f.start(f.options("c"), ViewFixture::rosterOps, metersC);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> c.state() == ViewFeeder.State.ACTIVE);
            f.awaitViewMatchesSource();

            System.out.printf("[failover] seed %d: %d source writes; a handled %.0f events before it was killed,"
                    + " b %.0f, c %.0f; lease fence now %s%n", seed, writes.get(), events(metersA), events(metersB),
                    events(metersC), db.getCollection("leases", BsonDocument.class).find().first().get("fence"));
            assertThat(f.view()).isEqualTo(f.expected());
        }
    }

    private static double events(SimpleMeterRegistry meters) {
        return meters.get("orderless.view.events").counter().count();
    }
}
