package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.Pause;
import dev.orderless.backends.PausePoint;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.testing.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The places where a view feeder decides from what it read, each forced into its worst interleaving with
 * {@link EmbeddedMongo#pause}: the lease claim, the position commit, and the view write guarded by the
 * source's {@code _v}. Lease time is a {@link ManualClock}: a lease expires when the test moves the clock
 * past its ttl, never by waiting. Each feeder has a client of its own, as separate processes would.
 */
class FeederInterleavingsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration TTL = Duration.ofSeconds(10);
    private static final String RESOURCE = "view:rosters";

    private final ManualClock clock = new ManualClock();
    private final LeaseOptions lease = new LeaseOptions(TTL, TTL.dividedBy(4), clock);
    private final List<ViewFeeder> feeders = new ArrayList<>();
    private final List<MongoClient> clients = new ArrayList<>();
    private EmbeddedMongo mongo;   // a server per test: a held command holds no connection of another
    private ViewFixture f;

    @BeforeEach
    void start() {
        mongo = EmbeddedMongo.start();
        f = new ViewFixture(client().getDatabase("feeder_interleavings"));
    }

    @AfterEach
    void stop() {
        feeders.forEach(ViewFeeder::close);
        clients.forEach(MongoClient::close);
        mongo.close();
    }

    /**
     * Feeder a sends its claim of the lease its dead owner left to lapse, and the claim is held before the
     * server runs it; b claims the same lease meanwhile and becomes the owner. When a's claim runs, it finds the
     * lease taken (its filter wants no owner, or an expiry at or before a's now, and b's expiry is a ttl later):
     * a gets nothing and stays standby. One owner, one fence.
     */
    @Test
    void a_claim_held_while_another_feeder_takes_over_the_lapsed_lease_finds_it_taken_and_stays_standby() {
        leases().tryAcquire(RESOURCE, "dead").orElseThrow().abandon();   // crashed: its lease lapses
        clock.advance(TTL.plusSeconds(1));
        SimpleMeterRegistry metersA = new SimpleMeterRegistry();

        try (Pause claimA = mongo.pause(PausePoint.before("findAndModify", "leases").where(claimBy("feeder-a")))) {
            ViewFeeder a = feeder("feeder-a", metersA);
            claimA.awaitHeld(WAIT);              // a's claim is at the server's door
            ViewFeeder b = feeder("feeder-b", new SimpleMeterRegistry());
            Awaitility.await("b takes over the lapsed lease").atMost(WAIT).until(() -> b.state() == ViewFeeder.State.ACTIVE);

            try (Pause claimAgain = mongo.pause(PausePoint.before("findAndModify", "leases").where(claimBy("feeder-a")))) {
                claimA.release();                // a's claim runs now, against b's lease
                claimAgain.awaitHeld(WAIT);      // a's claim came back, and a tries again as a standby

                assertThat(a.state()).isEqualTo(ViewFeeder.State.STANDBY);
                assertThat(a.fences()).as("a feeds nothing").isEmpty();
                assertThat(acquired(metersA)).as("a never took the lease").isZero();
                assertThat(b.state()).isEqualTo(ViewFeeder.State.ACTIVE);
                assertThat(b.fence()).hasValue(2);
                BsonDocument stored = leaseDocument();
                assertThat(stored.getString("owner").getValue()).isEqualTo("feeder-b");
                assertThat(stored.getNumber("fence").longValue()).as("one change of owner since the dead one").isEqualTo(2);
            }
        }
    }

    /**
     * Feeder a's claim wins the free lease, and its reply is held after the server ran it; a's lease expires
     * meanwhile and b takes it over. When the reply reaches a, the lease it won has already expired by a's own
     * clock: a does not go active on it (it would show ACTIVE beside b, with a stale fence), it stays standby.
     */
    @Test
    void a_claim_whose_reply_is_held_until_another_feeder_took_the_lease_over_leaves_the_feeder_standby() {
        SimpleMeterRegistry metersA = new SimpleMeterRegistry();

        try (Pause claimA = mongo.pause(PausePoint.after("findAndModify", "leases").where(claimBy("feeder-a")))) {
            ViewFeeder a = feeder("feeder-a", metersA);
            claimA.awaitHeld(WAIT);              // a owns the lease, and does not know it yet
            ViewFeeder b = feeder("feeder-b", new SimpleMeterRegistry());
            clock.advance(TTL.plusSeconds(1));   // a's lease expires before a hears it won
            Awaitility.await("b takes over").atMost(WAIT).until(() -> b.state() == ViewFeeder.State.ACTIVE);

            try (Pause claimAgain = mongo.pause(PausePoint.before("findAndModify", "leases").where(claimBy("feeder-a")))) {
                claimA.release();                // the reply reaches a
                claimAgain.awaitHeld(WAIT);      // a is back to claiming as a standby

                assertThat(acquired(metersA)).as("a never went active on the lease it won too late").isZero();
                assertThat(a.state()).isEqualTo(ViewFeeder.State.STANDBY);
                assertThat(a.fences()).isEmpty();
                assertThat(b.state()).isEqualTo(ViewFeeder.State.ACTIVE);
                assertThat(b.fence()).hasValue(2);
            }
        }
    }

    /**
     * Feeder a commits its position, and the commit is held before the server runs it; meanwhile a's lease
     * expires, b takes it over, replays what a had not committed, and commits positions of its own. When a's
     * commit runs, its owner and fence no longer match: it changes nothing, b's position stays, and a learns
     * it lost the lease and goes back to standby ({@code orderless.view.leadership{event=lost}}).
     */
    @Test
    void a_commit_held_until_another_feeder_took_the_lease_over_and_committed_is_refused_and_the_old_owner_stands_by() {
        SimpleMeterRegistry metersA = new SimpleMeterRegistry();
        SimpleMeterRegistry metersB = new SimpleMeterRegistry();
        ViewFeeder a = feeder("feeder-a", metersA);
        // written after a's bootstrap, so that it comes as an event, which a commits
        Awaitility.await("a bootstrapped").atMost(WAIT).until(() -> bootstraps(metersA) >= 1);
        f.enroll("s1", "C1");
        Awaitility.await("a commits its first position").atMost(WAIT).until(() -> commits(metersA) >= 1);

        // b is not started yet: the first commit from here on is a's
        try (Pause commitA = mongo.pause(PausePoint.before("update", "leases").where(storesAPosition()))) {
            f.enroll("s2", "C1");
            BsonDocument held = commitA.awaitHeld(WAIT);   // a handled s2, and its commit is at the door
            ViewFeeder b = feeder("feeder-b", metersB);
            clock.advance(TTL.plusSeconds(1));             // a's lease expires: its renewal waits behind the commit
            Awaitility.await("b takes over").atMost(WAIT).until(() -> b.state() == ViewFeeder.State.ACTIVE);
            f.enroll("s3", "C2");
            Awaitility.await("b replays s2, handles s3, and commits").atMost(WAIT)
                    .until(() -> commits(metersB) >= 2 && f.view().equals(f.expected()));
            BsonDocument committedByB = leaseDocument();

            commitA.release();                              // a's commit runs now, against b's lease
            Awaitility.await("a notices it lost the lease").atMost(WAIT).until(() -> lost(metersA) >= 1);

            assertThat(a.state()).isEqualTo(ViewFeeder.State.STANDBY);
            assertThat(a.fences()).isEmpty();
            assertThat(commits(metersA)).as("a's held commit is not counted").isEqualTo(1);
            BsonDocument stored = leaseDocument();
            assertThat(stored.getString("owner").getValue()).isEqualTo("feeder-b");
            assertThat(stored.getNumber("fence").longValue()).isEqualTo(2);
            assertThat(stored.get("position")).as("b's position, not overwritten")
                    .isEqualTo(committedByB.get("position"))
                    .isNotEqualTo(position(held));
            assertThat(b.state()).isEqualTo(ViewFeeder.State.ACTIVE);
        }
    }

    /**
     * The view article's figure 3, with the write itself held: feeder a sends the view write of s1's version
     * "Paused", held before the server runs it; a's lease expires, b takes it over and writes s1's next version,
     * "Grace". When a's write runs, the {@code _v} guard finds a newer version there: nothing is overwritten,
     * the write is superseded, a reads the lease, finds it gone, and goes back to standby.
     */
    @Test
    void a_former_owners_view_write_held_until_the_new_owner_wrote_a_newer_version_does_not_overwrite_it() {
        f.rename("s1", "Ada");
        f.enroll("s1", "CS 101");
        SimpleMeterRegistry metersA = new SimpleMeterRegistry();
        ViewFeeder a = feeder("feeder-a", metersA);
        f.awaitViewMatchesSource();

        try (Pause writeA = mongo.pause(PausePoint.before("update", "rosters").where(mentions("Paused")))) {
            f.rename("s1", "Paused");
            writeA.awaitHeld(WAIT);                         // a's write of the version "Paused" is at the door
            ViewFeeder b = feeder("feeder-b", new SimpleMeterRegistry());
            clock.advance(TTL.plusSeconds(1));              // a, stuck in its write, sends no heartbeat: it lapses
            Awaitility.await("b takes over").atMost(WAIT).until(() -> b.state() == ViewFeeder.State.ACTIVE);
            f.rename("s1", "Grace");
            f.awaitViewMatchesSource();                     // b wrote the version "Grace"

            writeA.release();                               // a's older version reaches the view now
            Awaitility.await("a notices it lost the lease").atMost(WAIT).until(() -> lost(metersA) >= 1);

            assertThat(metersA.get("orderless.view.writes").tag("outcome", "superseded").counter().count())
                    .as("a's write was refused by the _v guard").isGreaterThanOrEqualTo(1);
            assertThat(f.view().get("CS 101").get("s1")).contains("'Grace'");
            assertThat(f.view()).isEqualTo(f.expected());
            assertThat(a.state()).isEqualTo(ViewFeeder.State.STANDBY);
            assertThat(b.state()).isEqualTo(ViewFeeder.State.ACTIVE);
        }
    }

    /** A feeder of view:rosters with a client of its own, its leases on the test's clock, committing every event. */
    private ViewFeeder feeder(String owner, SimpleMeterRegistry meters) {
        MongoDatabase db = client().getDatabase(f.db.getName());
        ViewFeeder feeder = ViewFeeder.builder(db, "students",
                        GuardedApplier.create(db.getCollection("rosters", BsonDocument.class), ViewFixture.ROSTERS),
                        ViewFixture::rosterOps, MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class), lease))
                .options(FeederOptions.ofDefaults(RESOURCE).withOwner(owner).withLease(lease)
                        .withPolling(Duration.ofMillis(50), Duration.ofMillis(50))
                        .withCommit(1, Duration.ofHours(1)))
                .meters(meters).start();
        feeders.add(feeder);
        return feeder;
    }

    private LeaseProvider leases() {
        return MongoLeaseProvider.create(f.db.getCollection("leases", BsonDocument.class), lease);
    }

    private MongoClient client() {
        MongoClient client = MongoClients.create(mongo.connectionString());
        clients.add(client);
        return client;
    }

    private BsonDocument leaseDocument() {
        return f.db.getCollection("leases", BsonDocument.class).find().first();
    }

    /** The lease's findOneAndUpdate by {@code owner}: a claim. */
    private static Predicate<BsonDocument> claimBy(String owner) {
        return command -> command.isDocument("update") && command.getDocument("update").isDocument("$set")
                && command.getDocument("update").getDocument("$set").get("owner", BsonNull.VALUE)
                .equals(new BsonString(owner));
    }

    /** An update of the lease document that stores a position: a commit (not a renewal, not a release). */
    private static Predicate<BsonDocument> storesAPosition() {
        return command -> position(command) != null;
    }

    /** The position an update of the lease document stores, or null if it stores none. */
    private static BsonDocument position(BsonDocument update) {
        BsonDocument u = update.getArray("updates").get(0).asDocument().getDocument("u");
        return u.isDocument("$set") && u.getDocument("$set").isDocument("position")
                ? u.getDocument("$set").getDocument("position") : null;
    }

    private static Predicate<BsonDocument> mentions(String text) {
        return command -> command.toJson().contains(text);
    }

    private static double commits(SimpleMeterRegistry meters) {
        return meters.get("orderless.view.commits").counter().count();
    }

    private static double bootstraps(SimpleMeterRegistry meters) {
        return meters.get("orderless.view.bootstraps").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private static double lost(SimpleMeterRegistry meters) {
        return meters.get("orderless.view.leadership").tag("event", "lost").counter().count();
    }

    private static double acquired(SimpleMeterRegistry meters) {
        return meters.get("orderless.view.leadership").tag("event", "acquired").counter().count();
    }
}
