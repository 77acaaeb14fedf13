package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Never silent: bad source documents, projections that throw or break the contract, and a thread's death. */
@ExtendWith(MongoExtension.class)
class PoisonEventsTest {

    @Test
    void malformed_source_documents_are_dead_lettered_once_each_and_the_view_keeps_up(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            ViewFeeder feeder = f.start(f.options("a"), ViewFixture::rosterOps, meters);
            f.enroll("s1", "CS 101");
            // written by someone else: classes as a string, a class without a name, an _id that is not a string
            f.students.insertOne(new BsonDocument("_id", new BsonString("bad-string")).append("classes",
                    new BsonString("CS 101")).append("_v", new BsonInt64(1)));
            f.students.insertOne(new BsonDocument("_id", new BsonString("bad-entry")).append("classes",
                    new BsonArray(List.of(new BsonDocument("title", new BsonString("x"))))).append("_v", new BsonInt64(1)));
            f.students.insertOne(new BsonDocument("_id", new BsonInt32(42)).append("classes", new BsonArray())
                    .append("_v", new BsonInt64(1)));
            f.enroll("s2", "CS 101");
            f.enroll("s3", "MA 201");

            f.awaitViewMatchesSource();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> f.deadLetters().countDocuments() == 3);
            assertThat(f.deadLetters().find().map(d -> d.getDocument("_id").get("source").toString()).into(new java.util.ArrayList<>()))
                    .containsExactlyInAnyOrder("BsonString{value='bad-string'}", "BsonString{value='bad-entry'}",
                            "BsonInt32{value=42}");
            assertThat(f.deadLetters().find().first().getString("reason").getValue()).isNotBlank();
            assertThat(meters.counter("orderless.view.dead_lettered", "resource", "view:rosters").count()).isEqualTo(3);
            assertThat(feeder.deadLettered()).isEqualTo(3);
            assertThat(feeder.state()).isEqualTo(ViewFeeder.State.ACTIVE);
        }
    }

    @Test
    void the_next_good_version_of_a_dead_lettered_document_heals_the_view(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            ViewFeeder feeder = f.start(f.options("a"), ViewFixture::rosterOps, new SimpleMeterRegistry());
            f.students.insertOne(new BsonDocument("_id", new BsonString("s1")).append("classes",
                    new BsonString("CS 101")).append("_v", new BsonInt64(1)));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> feeder.deadLettered() == 1);

            f.students.replaceOne(new BsonDocument("_id", new BsonString("s1")), new BsonDocument("_id",
                    new BsonString("s1")).append("classes", new BsonArray(List.of(new BsonDocument("name",
                    new BsonString("CS 101")).append("seq", new BsonInt64(5))))).append("_v", new BsonInt64(2)));

            f.awaitViewMatchesSource();
            assertThat(f.view()).containsKey("CS 101");
        }
    }

    @Test
    void a_projection_that_fails_once_is_tried_again_and_nothing_is_dead_lettered(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            AtomicInteger calls = new AtomicInteger();
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            f.start(f.options("a"), (doc, v) -> {
                if (calls.incrementAndGet() == 1) {
                    throw new IllegalStateException("a passing fault");
                }
                return ViewFixture.rosterOps(doc, v);
            }, meters);
            f.enroll("s1", "CS 101");

            f.awaitViewMatchesSource();
            assertThat(meters.counter("orderless.view.attempts_failed", "resource", "view:rosters").count()).isEqualTo(1);
            assertThat(f.deadLetters().countDocuments()).isZero();
        }
    }

    @Test
    void with_the_fail_policy_a_poison_event_stops_the_feeder_naming_the_source_document(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            ViewFeeder feeder = f.start(f.options("a").withPoison(FeederOptions.PoisonPolicy.FAIL, 2),
                    (doc, v) -> {
                        throw new IllegalStateException("cannot read this one");
                    }, new SimpleMeterRegistry());
            f.enroll("s1", "CS 101");

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> feeder.state() == ViewFeeder.State.FAILED);
            assertThat(feeder.failure()).get().extracting(Throwable::getMessage).asString()
                    .contains("'s1'").contains("_v 1").contains("2 attempts").contains("cannot read this one");
            assertThat(f.deadLetters().countDocuments()).isZero();
        }
    }

    @Test
    void a_projection_that_emits_delete_is_refused(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            ViewFeeder feeder = f.start(f.options("a"), (doc, v) -> List.of(Operation.delete("CS 101", v)),
                    new SimpleMeterRegistry());
            f.enroll("s1", "CS 101");

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> feeder.state() == ViewFeeder.State.FAILED);
            assertThat(feeder.failure()).get().extracting(Throwable::getMessage).asString()
                    .contains("is a delete").contains("may not delete view documents");
            assertThat(f.rosters.countDocuments()).isZero();
        }
    }

    @Test
    void a_projection_that_emits_an_increment_is_refused_saying_what_to_do_instead(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            ViewFeeder feeder = f.start(f.options("a"), (doc, v) -> List.of(Operation.increment(
                    doc.getString("_id").getValue(), v, "credits", 1)), new SimpleMeterRegistry());
            f.enroll("s1", "CS 101");

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> feeder.state() == ViewFeeder.State.FAILED);
            assertThat(feeder.failure()).get().extracting(Throwable::getMessage).asString()
                    .contains("is an increment").contains("assign the source's counter value");
        }
    }

    @Test
    void a_projection_whose_writes_are_not_keyed_by_the_source_is_refused(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            ViewFeeder feeder = f.start(f.options("a"),
                    (doc, v) -> List.of(Operation.assign("CS 101", v, "title", new BsonString("shared register"))),
                    new SimpleMeterRegistry());
            f.enroll("s1", "CS 101");

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> feeder.state() == ViewFeeder.State.FAILED);
            assertThat(feeder.failure()).get().extracting(Throwable::getMessage).asString()
                    .contains("not keyed by its source");
        }
    }

    @Test
    void an_error_that_kills_the_worker_ends_in_FAILED_with_the_reason_and_a_metric(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db)) {
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            ViewFeeder feeder = f.start(f.options("a"), (doc, v) -> {
                throw new LinkageError("a broken class path");
            }, meters);
            f.enroll("s1", "CS 101");

            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> feeder.state() == ViewFeeder.State.FAILED);
            assertThat(feeder.failure()).get().extracting(Throwable::getMessage).asString()
                    .contains("LinkageError").contains("a broken class path");
            assertThat(meters.counter("orderless.view.failures", "resource", "view:rosters", "reason", "bug").count())
                    .isEqualTo(1);
        }
    }
}
