package dev.orderless.view;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.lease.MongoLeaseProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Students (the source, written through the guarded applier) feed class rosters (the view): one roster
 * per class, each enrolled student with the name the student document had. A small stand-in for the
 * demo's projection.
 */
final class ViewFixture implements AutoCloseable {
    static final CollectionSchema STUDENTS = CollectionSchema.builder()
            .set(SetField.of("classes", "name")).register("name").counter("credits").build();
    static final CollectionSchema ROSTERS = CollectionSchema.builder()
            .set(new SetField("students", "removed_students", "id")).register("title").build();

    final MongoCollection<BsonDocument> students;
    final MongoCollection<BsonDocument> rosters;
    final GuardedApplier studentWrites;
    final GuardedApplier rosterWrites;
    final LeaseProvider leases;
    final MongoDatabase db;
    private final List<ViewFeeder> feeders = new ArrayList<>();
    private long seq;

    ViewFixture(MongoDatabase db) {
        this.db = db;
        students = db.getCollection("students", BsonDocument.class);
        rosters = db.getCollection("rosters", BsonDocument.class);
        studentWrites = GuardedApplier.create(students, STUDENTS);
        rosterWrites = GuardedApplier.create(rosters, ROSTERS);
        leases = MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class),
                LeaseOptions.ofDefaults().withTtl(Duration.ofMillis(1000), Duration.ofMillis(250)));
    }

    /** students -&gt; rosters: live classes are added with the student's name, tombstones removed. */
    static List<Operation> rosterOps(BsonDocument student, long version) {
        String id = student.getString("_id").getValue();
        BsonValue name = student.get("name", BsonNull.VALUE);
        List<Operation> ops = new ArrayList<>();
        student.getArray("classes", new org.bson.BsonArray()).forEach(c -> ops.add(Operation.add(
                c.asDocument().getString("name").getValue(), version, "students", id, new BsonDocument("name", name))));
        student.getArray("deleted_classes", new org.bson.BsonArray()).forEach(c -> ops.add(Operation.remove(
                c.asDocument().getString("name").getValue(), version, "students", id)));
        return ops;
    }

    FeederOptions options(String owner) {
        return FeederOptions.ofDefaults("view:rosters").withOwner(owner)
                .withLease(LeaseOptions.ofDefaults().withTtl(Duration.ofMillis(1000), Duration.ofMillis(250)))
                .withPolling(Duration.ofMillis(50), Duration.ofMillis(100))
                .withCommit(10, Duration.ofMillis(200));
    }

    ViewFeeder start(FeederOptions options, ViewProjection projection, SimpleMeterRegistry meters) {
        return start(options, projection, meters, rosterWrites);
    }

    /** A feeder writing the rosters through {@code rosters} (a client of the test's own, say). */
    ViewFeeder start(FeederOptions options, ViewProjection projection, SimpleMeterRegistry meters, GuardedApplier rosters) {
        ViewFeeder feeder = ViewFeeder.builder(db, "students", rosters, projection, leases)
                .options(options).meters(meters).start();
        feeders.add(feeder);
        return feeder;
    }

    /** A thread that enrolls, unenrolls and renames 40 students at random until {@code writing} turns false. */
    Thread writer(java.util.concurrent.atomic.AtomicBoolean writing, long seed,
                  java.util.concurrent.atomic.AtomicLong writes) {
        return new Thread(() -> {
            java.util.Random random = new java.util.Random(seed);
            while (writing.get()) {
                String student = "s" + random.nextInt(40);
                int action = random.nextInt(10);
                if (action < 5) {
                    enroll(student, "C" + random.nextInt(6));
                } else if (action < 8) {
                    unenroll(student, "C" + random.nextInt(6));
                } else {
                    rename(student, "N" + random.nextInt(1000));
                }
                writes.incrementAndGet();
            }
        }, "source-writer");
    }

    void enroll(String student, String course) {
        studentWrites.apply(Operation.add(student, ++seq, "classes", course));
    }

    void unenroll(String student, String course) {
        studentWrites.apply(Operation.remove(student, ++seq, "classes", course));
    }

    void credit(String student, long credits) {
        studentWrites.apply(Operation.increment(student, ++seq, "credits", credits));
    }

    void rename(String student, String name) {
        studentWrites.apply(Operation.assign(student, ++seq, "name", new BsonString(name)));
    }

    /** class -&gt; student -&gt; (name, source version), as the view holds it. */
    Map<String, Map<String, String>> view() {
        Map<String, Map<String, String>> view = new TreeMap<>();
        rosters.find().forEach(doc -> {
            Map<String, String> members = new TreeMap<>();
            EntityState.of(doc, ROSTERS).live().getOrDefault("students", Map.of()).forEach((id, e) ->
                    members.put(id, String.valueOf(e.attrs().get("name")) + "@v" + e.seq()));
            if (!members.isEmpty()) {
                view.put(doc.getString("_id").getValue(), members);
            }
        });
        return view;
    }

    /** What the view must hold for the source as it is now: every live class, each student's latest version. */
    Map<String, Map<String, String>> expected() {
        Map<String, Map<String, String>> expected = new TreeMap<>();
        students.find().forEach(student -> {
            if (!student.isString("_id") || !student.isNumber("_v")) {
                return;   // malformed: not in the view
            }
            long version = student.getNumber("_v").longValue();
            List<Operation> ops;
            try {
                ops = rosterOps(student, version);
            } catch (RuntimeException malformed) {
                return;   // a document the projection cannot read: dead-lettered, not in the view
            }
            for (Operation op : ops) {
                if (op instanceof Operation.Add add) {
                    expected.computeIfAbsent(add.entity(), c -> new TreeMap<>())
                            .put(add.element(), String.valueOf(add.attrs().get("name")) + "@v" + version);
                }
            }
        });
        return expected;
    }

    /** The view's dead letters: rosters_dead_letters. */
    MongoCollection<BsonDocument> deadLetters() {
        return db.getCollection("rosters_dead_letters", BsonDocument.class);
    }

    void awaitViewMatchesSource() {
        Awaitility.await("view equals the projection of the source").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100)).until(() -> view().equals(expected()));
    }

    @Override
    public void close() {
        feeders.forEach(ViewFeeder::close);
    }
}
