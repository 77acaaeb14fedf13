package dev.orderless.view;

import dev.orderless.apply.Operation;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The view article's figures 3, 4a and 4b, and the crash-before-commit replay, as behaviours. */
@ExtendWith(MongoExtension.class)
class ViewFeederTest {

    @Test
    void writes_made_before_the_first_feeder_starts_are_in_the_view(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            for (int i = 0; i < 20; i++) {
                f.rename("s" + i, "Student " + i);
                f.enroll("s" + i, "C" + (i % 3));
            }
            f.unenroll("s0", "C0");

            ViewFeeder feeder = f.start(f.options("a"), ViewFixture::rosterOps, new SimpleMeterRegistry());

            f.awaitViewMatchesSource();
            assertThat(feeder.state()).isEqualTo(ViewFeeder.State.ACTIVE);
            assertThat(f.view().get("C0")).doesNotContainKey("s0").containsKey("s3");
        }
    }

    @Test
    void a_counter_is_projected_as_its_value_and_the_view_follows_its_sum(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            // a view is fed whole versions of its source again and again: it carries the counter's value, never an
            // increment (which would count a version twice)
            ViewProjection withCredits = (student, version) -> ViewFixture.rosterOps(student, version).stream()
                    .map(op -> op instanceof Operation.Add add ? Operation.add(add.entity(), add.seq(), add.field(),
                            add.element(), add.attrs().append("credits", student.get("credits",
                                    new org.bson.BsonInt64(0)))) : op)
                    .toList();
            f.start(f.options("a"), withCredits, new SimpleMeterRegistry());
            f.enroll("s1", "CS 101");
            f.enroll("s2", "CS 101");
            for (int i = 1; i <= 5; i++) {
                f.credit("s1", i);
                f.credit("s2", -1);
            }

            Awaitility.await("the roster shows each student's credits").atMost(Duration.ofSeconds(30))
                    .until(() -> credits(f, "CS 101").equals(java.util.Map.of("s1", 15L, "s2", -5L)));
        }
    }

    private static java.util.Map<String, Long> credits(ViewFixture f, String course) {
        java.util.Map<String, Long> credits = new java.util.TreeMap<>();
        org.bson.BsonDocument roster = f.rosters.find(new org.bson.BsonDocument("_id", new org.bson.BsonString(course)))
                .first();
        if (roster != null) {
            roster.getArray("students", new org.bson.BsonArray()).forEach(e -> credits.put(
                    e.asDocument().getString("id").getValue(), e.asDocument().getNumber("credits").longValue()));
        }
        return credits;
    }

    @Test
    void a_feeder_that_stops_before_processing_its_first_change_is_replaced_and_the_change_is_not_missed(
            MongoDatabase db) throws Exception {
        try (ViewFixture f = new ViewFixture(db)) {
            CountDownLatch holdingTheChange = new CountDownLatch(1);
            CountDownLatch never = new CountDownLatch(1);
            SimpleMeterRegistry metersA = new SimpleMeterRegistry();
            ViewFeeder a = f.start(f.options("a"), (doc, v) -> {
                holdingTheChange.countDown();
                await(never);   // a hung process: it never gets to apply this change
                return ViewFixture.rosterOps(doc, v);
            }, metersA);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> a.state() == ViewFeeder.State.ACTIVE);
            ViewFeeder b = f.start(f.options("b"), ViewFixture::rosterOps, new SimpleMeterRegistry());

            f.rename("s1", "Ada");
            f.enroll("s1", "CS 101");
            assertThat(holdingTheChange.await(10, TimeUnit.SECONDS)).isTrue();

            // a stops heartbeating, its lease lapses, b takes over and sees the change a never applied
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> b.state() == ViewFeeder.State.ACTIVE);
            f.awaitViewMatchesSource();
            assertThat(f.view()).containsKey("CS 101");
            never.countDown();
        }
    }

    @Test
    void a_paused_owner_is_replaced_its_late_write_is_rejected_and_it_stops(MongoDatabase db) throws Exception {
        try (ViewFixture f = new ViewFixture(db)) {
            f.rename("s1", "Ada");
            f.enroll("s1", "CS 101");
            CountDownLatch paused = new CountDownLatch(1);
            CountDownLatch wake = new CountDownLatch(1);
            SimpleMeterRegistry metersA = new SimpleMeterRegistry();
            ViewFeeder a = f.start(f.options("a"), (doc, v) -> {
                if (doc.getString("name").getValue().equals("Paused")) {
                    paused.countDown();
                    await(wake);   // a GC pause: no heartbeat, no renewal, the lease lapses
                }
                return ViewFixture.rosterOps(doc, v);
            }, metersA);
            f.awaitViewMatchesSource();
            ViewFeeder b = f.start(f.options("b"), ViewFixture::rosterOps, new SimpleMeterRegistry());

            f.rename("s1", "Paused");   // a holds this version and pauses before writing it
            assertThat(paused.await(10, TimeUnit.SECONDS)).isTrue();
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> b.state() == ViewFeeder.State.ACTIVE);
            f.rename("s1", "Grace");    // b writes newer data
            f.awaitViewMatchesSource();

            wake.countDown();           // a wakes and writes its older version
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                    metersA.get("orderless.view.leadership").tag("event", "lost").counter().count() >= 1);

            assertThat(metersA.get("orderless.view.writes").tag("outcome", "superseded").counter().count())
                    .as("a's late write was rejected").isGreaterThanOrEqualTo(1);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> a.state() == ViewFeeder.State.STANDBY);
            assertThat(b.state()).isEqualTo(ViewFeeder.State.ACTIVE);
            assertThat(f.view().get("CS 101").get("s1")).contains("'Grace'");
            f.awaitViewMatchesSource();
        }
    }

    @Test
    void a_crash_after_applying_but_before_committing_is_replayed_harmlessly(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            FeederOptions neverCommits = f.options("a").withCommit(1_000_000, Duration.ofHours(1));
            ViewFeeder a = f.start(neverCommits, ViewFixture::rosterOps, new SimpleMeterRegistry());
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> a.state() == ViewFeeder.State.ACTIVE);
            for (int i = 0; i < 30; i++) {
                f.rename("s" + (i % 5), "N" + i);
                f.enroll("s" + (i % 5), "C" + (i % 4));
            }
            f.awaitViewMatchesSource();
            List<BsonDocument> before = f.rosters.find().into(new java.util.ArrayList<>());

            a.halt();   // crashed: the view has the changes, the lease has no newer position
            SimpleMeterRegistry metersB = new SimpleMeterRegistry();
            ViewFeeder b = f.start(f.options("b"), ViewFixture::rosterOps, metersB);
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                    metersB.get("orderless.view.writes").counters().stream().mapToDouble(c -> c.count()).sum() >= 1
                            && b.state() == ViewFeeder.State.ACTIVE);
            f.awaitViewMatchesSource();

            assertThat(metersB.get("orderless.view.writes").tag("outcome", "applied").counter().count())
                    .as("every replayed write was already there").isZero();
            assertThat(f.rosters.find().into(new java.util.ArrayList<>())).as("view unchanged").isEqualTo(before);
        }
    }

    @Test
    void a_dropped_source_stops_the_feeder_with_a_clear_error(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            f.enroll("s1", "CS 101");
            ViewFeeder feeder = f.start(f.options("a"), ViewFixture::rosterOps, new SimpleMeterRegistry());
            f.awaitViewMatchesSource();

            f.students.drop();

            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> feeder.state() == ViewFeeder.State.FAILED);
            assertThat(feeder.failure()).get().extracting(Throwable::getMessage).asString()
                    .contains("'students' saw drop").contains("unset 'position'");
        }
    }

    @Test
    void a_quiet_stream_commits_its_position_on_the_interval(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            f.start(f.options("a").withCommit(1_000_000, Duration.ofMillis(100)), ViewFixture::rosterOps, meters);
            // write after the bootstrap, so the change arrives as an event (the embedded server has no
            // resume token before a first event)
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                    meters.get("orderless.view.bootstraps").counters().stream().mapToDouble(c -> c.count()).sum() >= 1);
            f.enroll("s1", "CS 101");
            f.awaitViewMatchesSource();

            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                    meters.get("orderless.view.commits").counter().count() >= 1);
            BsonDocument lease = db.getCollection("leases", BsonDocument.class).find().first();
            assertThat(lease.get("position")).isNotNull();
        }
    }

    static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
