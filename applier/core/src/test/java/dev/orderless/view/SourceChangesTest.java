package dev.orderless.view;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Hard deletes, a dropped and recreated source, and a rebuild that must not skip a gap. */
@ExtendWith(MongoExtension.class)
class SourceChangesTest {

    @Test
    void a_hard_delete_of_a_source_document_takes_it_out_of_every_roster(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            f.start(f.options("a"), ViewFixture::rosterOps, meters);
            f.enroll("s1", "CS 101");
            f.enroll("s1", "MA 201");
            f.enroll("s2", "CS 101");
            f.awaitViewMatchesSource();

            f.students.deleteOne(eq("_id", "s1"));   // a TTL index or an admin, not orderless

            f.awaitViewMatchesSource();
            assertThat(f.view()).containsOnlyKeys("CS 101");
            assertThat(f.view().get("CS 101")).containsOnlyKeys("s2");
            assertThat(meters.counter("orderless.view.source_deletes", "resource", "view:rosters").count()).isEqualTo(1);
        }
    }

    @Test
    void a_hard_delete_while_no_feeder_runs_is_taken_back_when_one_resumes(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            ViewFeeder first = startedAndStreaming(f);
            f.enroll("s1", "CS 101");
            f.enroll("s2", "CS 101");
            f.awaitViewMatchesSource();
            awaitCommitted(f);
            first.close();

            f.students.deleteOne(eq("_id", "s1"));
            f.start(f.options("b"), ViewFixture::rosterOps, new SimpleMeterRegistry());

            f.awaitViewMatchesSource();
            assertThat(f.view().get("CS 101")).containsOnlyKeys("s2");
        }
    }

    @Test
    void a_deleted_source_clears_the_registers_of_its_own_view_document_and_leaves_others_entries(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db); JoinTest.Joined joined = new JoinTest.Joined(db, f)) {
            f.enroll("s1", "CS 101");
            joined.title("CS 101", "Intro");
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> "Intro".equals(joined.titleOf("CS 101")));

            db.getCollection("classes", BsonDocument.class).deleteOne(eq("_id", "CS 101"));

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> joined.titleOf("CS 101") == null);
            f.awaitViewMatchesSource();
            assertThat(f.view().get("CS 101")).containsOnlyKeys("s1");
        }
    }

    @Test
    void a_source_dropped_and_recreated_while_no_feeder_runs_is_refused_with_what_to_do(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            ViewFeeder first = startedAndStreaming(f);
            f.enroll("s1", "CS 101");
            f.awaitViewMatchesSource();
            awaitCommitted(f);
            first.close();

            f.students.drop();
            f.enroll("s9", "MA 201");   // a new collection, its documents back at _v 1
            ViewFeeder second = f.start(f.options("b"), ViewFixture::rosterOps, new SimpleMeterRegistry());

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> second.state() == ViewFeeder.State.FAILED);
            assertThat(second.failure()).get().extracting(Throwable::getMessage).asString()
                    .contains("dropped and recreated").contains("drop or clear the view collection")
                    .contains("unset 'position'");
        }
    }

    @Test
    void oplog_start_with_no_committed_change_rebuilds_by_a_scan_and_misses_no_older_document(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            f.enroll("s1", "CS 101");
            f.enroll("s2", "MA 201");

            f.start(f.options("a").withBootstrap(FeederOptions.Bootstrap.OPLOG_START), ViewFixture::rosterOps,
                    new SimpleMeterRegistry());

            f.awaitViewMatchesSource();
            assertThat(f.view()).containsOnlyKeys("CS 101", "MA 201");
        }
    }

    /** A feeder past its bootstrap, so that the writes after this are change events it commits positions for. */
    private static ViewFeeder startedAndStreaming(ViewFixture f) {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ViewFeeder feeder = f.start(f.options("a"), ViewFixture::rosterOps, meters);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> meters.find("orderless.view.bootstraps")
                .counters().stream().mapToDouble(c -> c.count()).sum() >= 1);
        return feeder;
    }

    /** The lease document holds a committed position (the embedded server has a token only after an event). */
    private static void awaitCommitted(ViewFixture f) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            BsonDocument lease = f.db.getCollection("leases", BsonDocument.class).find(eq("_id", "view:rosters")).first();
            return lease != null && lease.containsKey("position");
        });
    }
}
