package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.testing.MongoExtension;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(MongoExtension.class)
class ClassRosterProjectionTest {
    private MongoDatabase db;
    private MongoCollection<BsonDocument> students;
    private MongoCollection<BsonDocument> rosters;
    private GuardedApplier studentWrites;
    private ViewFeeder feeder;
    private long seq;

    @BeforeEach
    void setUp(MongoDatabase db) {
        this.db = db;   // each parameter resolution is a fresh database: the feeder must use this one
        students = db.getCollection(Enrollment.STUDENTS, BsonDocument.class);
        rosters = db.getCollection(Enrollment.ROSTERS, BsonDocument.class);
        studentWrites = GuardedApplier.create(students, Enrollment.STUDENT_SCHEMA);
    }

    @Test
    void a_rename_reaches_every_roster_the_student_is_on(MongoDatabase db) {
        apply(Operation.assign("s1", ++seq, "name", new BsonString("Ada")));
        for (String course : new String[] {"CS 101", "MA 201", "PH 301"}) {
            apply(Operation.add("s1", ++seq, "classes", course));
        }
        apply(Operation.add("s2", ++seq, "classes", "CS 101"));
        startFeeder();
        awaitConsistent();

        apply(Operation.assign("s1", ++seq, "name", new BsonString("Ada Lovelace")));

        awaitConsistent();
        Map<String, Map<String, BsonValue>> view = Rosters.inView(rosters);
        assertThat(view.keySet()).containsExactly("CS 101", "MA 201", "PH 301");
        view.values().forEach(members -> assertThat(members.get("s1").asDocument().get("name"))
                .isEqualTo(new BsonString("Ada Lovelace")));
        feeder.close();
    }

    @Test
    void a_students_credits_reach_every_roster_they_are_on(MongoDatabase db) {
        apply(Operation.add("s1", ++seq, "classes", "CS 101"));
        apply(Operation.increment("s1", ++seq, Enrollment.CREDITS, 4));
        apply(Operation.add("s1", ++seq, "classes", "MA 201"));
        startFeeder();
        awaitConsistent();

        apply(Operation.increment("s1", ++seq, Enrollment.CREDITS, 3));

        awaitConsistent();
        assertThat(Rosters.inView(rosters).values()).hasSize(2).allSatisfy(members ->
                assertThat(members.get("s1").asDocument().get(Enrollment.CREDITS)).isEqualTo(new org.bson.BsonInt64(7)));
        feeder.close();
    }

    @Test
    void unenrolling_and_leaving_school_take_the_student_off_the_rosters(MongoDatabase db) {
        startFeeder();
        apply(Operation.assign("s1", ++seq, "name", new BsonString("Grace")));
        apply(Operation.add("s1", ++seq, "classes", "CS 101"));
        apply(Operation.add("s1", ++seq, "classes", "MA 201"));
        apply(Operation.add("s2", ++seq, "classes", "MA 201"));
        awaitConsistent();

        apply(Operation.remove("s1", ++seq, "classes", "CS 101"));
        apply(Operation.delete("s2", ++seq));

        awaitConsistent();
        assertThat(Rosters.inView(rosters)).isEqualTo(Map.of("MA 201", Map.of("s1", new org.bson.BsonDocument("name",
                new BsonString("Grace")).append(Enrollment.CREDITS, new org.bson.BsonInt64(0)))));
        feeder.close();
    }

    private void startFeeder() {
        LeaseOptions lease = LeaseOptions.ofDefaults().withTtl(Duration.ofSeconds(2), Duration.ofMillis(500));
        feeder = ViewFeeder.builder(db, Enrollment.STUDENTS, GuardedApplier.create(rosters, Enrollment.ROSTER_SCHEMA),
                        new ClassRosterProjection(),
                        MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class), lease))
                .options(FeederOptions.ofDefaults(Enrollment.ROSTER_LEASE).withLease(lease)
                        .withPolling(Duration.ofMillis(50), Duration.ofMillis(100)))
                .start();
    }

    private void apply(Operation op) {
        studentWrites.apply(op);
    }

    private void awaitConsistent() {
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> Rosters.inView(rosters).equals(Rosters.fromStudents(students)));
    }
}
