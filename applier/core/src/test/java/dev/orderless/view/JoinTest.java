package dev.orderless.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.testing.MongoExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The view article's figures 2a and 2b: a roster joins two sources, the students enrolled (from the
 * students collection) and the class title (from the classes collection), each fed by its own feeder.
 * Whichever side is written first, the roster ends with both.
 */
@ExtendWith(MongoExtension.class)
class JoinTest {
    private static final CollectionSchema CLASSES = CollectionSchema.builder().register("title").build();

    @Test
    void the_student_side_first_then_the_class_side_ends_consistent(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db); Joined joined = new Joined(db, f)) {
            f.rename("s1", "Ada");
            f.enroll("s1", "CS 101");
            joined.title("CS 101", "Intro to CS");

            joined.awaitRoster("CS 101", "Intro to CS", "s1");
        }
    }

    @Test
    void the_class_side_first_then_the_student_side_ends_consistent(MongoDatabase db) {
        try (ViewFixture f = new ViewFixture(db); Joined joined = new Joined(db, f)) {
            joined.title("MA 201", "Linear Algebra");
            f.rename("s2", "Grace");
            f.enroll("s2", "MA 201");

            joined.awaitRoster("MA 201", "Linear Algebra", "s2");
        }
    }

    /** The classes source and both feeders. */
    static final class Joined implements AutoCloseable {
        private final ViewFixture f;
        private final GuardedApplier classWrites;
        private final List<ViewFeeder> feeders;
        private long seq;

        Joined(MongoDatabase db, ViewFixture f) {
            this.f = f;
            MongoCollection<BsonDocument> classes = db.getCollection("classes", BsonDocument.class);
            this.classWrites = GuardedApplier.create(classes, CLASSES);
            ViewFeeder students = f.start(f.options("a"), ViewFixture::rosterOps, new SimpleMeterRegistry());
            ViewFeeder titles = ViewFeeder.builder(db, "classes", f.rosterWrites,
                            (doc, v) -> List.of(Operation.assign(doc.getString("_id").getValue(), v, "title",
                                    doc.get("title", new BsonString("")))), f.leases)
                    .options(new FeederOptions("view:rosters:titles", "titles", 10, Duration.ofMillis(200),
                            Duration.ofMillis(50), Duration.ofMillis(100), FeederOptions.Bootstrap.SCAN,
                            f.options("a").lease(), FeederOptions.PoisonPolicy.DEAD_LETTER, 3,
                            FeederOptions.Writes.BULK, 1, 1))
                    .start();
            this.feeders = List.of(students, titles);
        }

        void title(String course, String title) {
            classWrites.apply(Operation.assign(course, ++seq, "title", new BsonString(title)));
        }

        /** The roster's title, or null if it has none (or it was cleared). */
        String titleOf(String course) {
            BsonDocument roster = f.rosters.find(com.mongodb.client.model.Filters.eq("_id", course)).first();
            if (roster == null) {
                return null;
            }
            EntityState.Register title = EntityState.of(roster, ViewFixture.ROSTERS).registers().get("title");
            return title == null || !title.value().isString() ? null : title.value().asString().getValue();
        }

        void awaitRoster(String course, String title, String student) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
                BsonDocument roster = f.rosters.find(com.mongodb.client.model.Filters.eq("_id", course)).first();
                if (roster == null) {
                    return false;
                }
                EntityState state = EntityState.of(roster, ViewFixture.ROSTERS);
                return state.registers().containsKey("title")
                        && state.registers().get("title").value().equals(new BsonString(title))
                        && state.live().getOrDefault("students", java.util.Map.of()).containsKey(student);
            });
            assertThat(f.view().get(course)).containsKey(student);
        }

        @Override
        public void close() {
            feeders.get(1).close();
        }
    }
}
