package dev.orderless.demo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.amqp.QueueTopology;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.RabbitBackend;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.MeterRegistry;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * What every subcommand connects to and builds, in one place: the backends (explicit URI, else
 * environment, else embedded), the collections, the queues, the consumers and the roster feeder.
 */
final class Wiring implements AutoCloseable {
    final DemoOptions options;
    final MongoBackend mongoBackend;
    final RabbitBackend rabbitBackend;
    final MongoClient client;
    final MongoDatabase db;
    final MongoCollection<BsonDocument> students;
    final MongoCollection<BsonDocument> rosters;
    final CachingConnectionFactory rabbit;

    Wiring(DemoOptions options) {
        this.options = options;
        this.mongoBackend = Backends.mongo(options.mongo());
        this.rabbitBackend = Backends.rabbit(options.rabbit());
        this.client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(mongoBackend.connectionString()))
                .writeConcern(WriteConcern.MAJORITY).build());
        this.db = client.getDatabase(options.database());
        this.students = db.getCollection(Enrollment.STUDENTS, BsonDocument.class);
        this.rosters = db.getCollection(Enrollment.ROSTERS, BsonDocument.class);
        this.rabbit = new CachingConnectionFactory(rabbitBackend.uri());
        rabbit.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        rabbit.setPublisherReturns(true);
        rabbit.setChannelCacheSize(32);
        rabbit.setConnectionNameStrategy(f -> "orderless-demo-" + options.command());
    }

    QueueTopology.Declared declareQueues() {
        return QueueTopology.declare(rabbit, options.queue(), options.deadLetterQueue());
    }

    GuardedApplier studentApplier(MeterRegistry meters) {
        return GuardedApplier.create(students, Enrollment.STUDENT_SCHEMA,
                dev.orderless.apply.ApplierOptions.ofDefaults().withMeters(meters));
    }

    OperationConsumer startConsumers(MeterRegistry meters) {
        return OperationConsumer.builder(rabbit, studentApplier(meters))
                .options(ConsumerOptions.ofDefaults(options.queue()).withDeadLetterQueue(options.deadLetterQueue())
                        .withConsumers(options.consumers()))
                .meters(meters)
                .start();
    }

    ViewFeeder startRosterFeeder(MeterRegistry meters) {
        LeaseOptions lease = LeaseOptions.ofDefaults();
        return ViewFeeder.builder(db, Enrollment.STUDENTS, GuardedApplier.create(rosters, Enrollment.ROSTER_SCHEMA),
                        new ClassRosterProjection(),
                        MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class), lease))
                .options(FeederOptions.ofDefaults(Enrollment.ROSTER_LEASE).withLease(lease))
                .meters(meters)
                .client(client)
                .start();
    }

    String describe() {
        return "MongoDB: " + mongoBackend.description() + ", database '" + options.database() + "'\n"
                + "AMQP:    " + rabbitBackend.description() + ", queue '" + options.queue() + "' (dead letters: '"
                + options.deadLetterQueue() + "')";
    }

    @Override
    public void close() {
        rabbit.destroy();
        client.close();
        rabbitBackend.close();
        mongoBackend.close();
    }
}
