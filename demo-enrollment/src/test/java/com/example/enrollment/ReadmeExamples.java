package com.example.enrollment;

// tag::imports[]
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.SetField;
import dev.orderless.broker.QueueTopology;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import dev.orderless.view.ViewProjection;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
// end::imports[]

/**
 * The code README.md shows, compiled and run by {@link ReadmeExamplesTest}, which also fails if the
 * README's copy of a tagged region differs from this file. Change both together.
 */
final class ReadmeExamples {
    private ReadmeExamples() {
    }

    // tag::connect[]
    /** One client per process, shared by everything below. */
    static MongoClient mongo(String uri) {   // e.g. mongodb://localhost:27017/?replicaSet=rs0
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .writeConcern(WriteConcern.MAJORITY)   // an applied write survives a primary failover
                .build());
    }

    /** One connection factory per process; the publisher needs confirms and returns switched on. */
    static CachingConnectionFactory rabbit(String uri) {   // e.g. amqp://guest:guest@localhost:5672/%2F
        CachingConnectionFactory rabbit = new CachingConnectionFactory(URI.create(uri));
        rabbit.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        rabbit.setPublisherReturns(true);
        rabbit.getRabbitConnectionFactory().setChannelRpcTimeout(10_000);   // not 10 min while RabbitMQ blocks it
        return rabbit;
    }
    // end::connect[]

    // tag::schema[]
    /** Students: a set of classes (with tombstones) and a last-writer-wins name. */
    static final CollectionSchema STUDENTS = CollectionSchema.builder()
            .set(SetField.of("classes", "name"))   // live array "classes", tombstones "deleted_classes", key "name"
            .register("name")
            .build();
    // end::schema[]

    // tag::apply[]
    /** A student's actions, delivered out of order and twice: the state is as if applied once, in seq order. */
    static List<Outcome> enrollThenLeave(MongoDatabase db) {
        GuardedApplier applier = GuardedApplier.create(db.getCollection("students", BsonDocument.class), STUDENTS);
        return List.of(
                applier.apply(Operation.remove("student-17", 1043, "classes", "CS 101")),  // APPLIED: a tombstone
                applier.apply(Operation.add("student-17", 1042, "classes", "CS 101")),     // SUPERSEDED by 1043
                applier.apply(Operation.remove("student-17", 1043, "classes", "CS 101")),  // DUPLICATE: a redelivery
                applier.apply(Operation.assign("student-17", 1044, "name", new BsonString("Ada"))));  // APPLIED
    }
    // end::apply[]

    // tag::producer[]
    /** Built once at start-up: the topology, the stamper (a counter per entity in MongoDB) and the publisher. */
    static StampingPublisher publisher(MongoDatabase db, CachingConnectionFactory rabbit, String queue) {
        QueueTopology.declare(rabbit, queue, queue + ".dlq");   // on RabbitMQ: a quorum queue and its dead-letter queue
        return new StampingPublisher(MongoCounterStamper.create(db.getCollection("seq_counters", BsonDocument.class)),
                ConfirmingPublisher.toQueue(rabbit, queue, PublisherOptions.ofDefaults()));
    }

    /** Per request: stamp the action with its entity's next seq, publish it, return once the broker confirmed. */
    static void enroll(StampingPublisher publisher, String student, String course) {
        publisher.publish(student, seq -> Operation.add(student, seq, "classes", course));
    }
    // end::producer[]

    // tag::consumer[]
    /** Any number of these, in any number of processes: each message ends applied, stale or dead-lettered. */
    static OperationConsumer consume(MongoDatabase db, CachingConnectionFactory rabbit, String queue) {
        QueueTopology.declare(rabbit, queue, queue + ".dlq");   // idempotent: producers and consumers both declare
        GuardedApplier applier = GuardedApplier.create(db.getCollection("students", BsonDocument.class), STUDENTS);
        return OperationConsumer.builder(rabbit, applier)
                .options(ConsumerOptions.ofDefaults(queue).withConcurrency(4))   // dead letters go to queue + ".dlq"
                .start();                                                       // close() on shutdown
    }
    // end::consumer[]

    // tag::view[]
    /** Class rosters fed from the students' change stream: one active feeder per lease, on every node. */
    static ViewFeeder feedRosters(MongoDatabase db) {
        CollectionSchema rosters = CollectionSchema.builder()
                .set(new SetField("students", "removed_students", "id"))
                .build();
        ViewProjection projection = (student, version) -> {      // the whole student, at its version _v
            String id = student.getString("_id").getValue();
            BsonValue name = student.get("name", BsonNull.VALUE);
            List<Operation> ops = new ArrayList<>();
            for (BsonValue course : student.getArray("classes", new BsonArray())) {
                String roster = course.asDocument().getString("name").getValue();
                ops.add(Operation.add(roster, version, "students", id, new BsonDocument("name", name)));
            }
            for (BsonValue course : student.getArray("deleted_classes", new BsonArray())) {
                ops.add(Operation.remove(course.asDocument().getString("name").getValue(), version, "students", id));
            }
            return ops;
        };
        MongoCollection<BsonDocument> leases = db.getCollection("leases", BsonDocument.class);
        return ViewFeeder.builder(db, "students", GuardedApplier.create(db.getCollection("class_rosters",
                                BsonDocument.class), rosters), projection,
                        MongoLeaseProvider.create(leases, LeaseOptions.ofDefaults()))
                .options(FeederOptions.ofDefaults("view:class_rosters"))
                .start();                                                       // close() on shutdown
    }
    // end::view[]
}
