package com.example.enrollment;

import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp10.Amqp10Consumer;
import dev.orderless.amqp10.Amqp10Publisher;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.broker.QueueTopology;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.stamp.MongoCounterStamper;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/** The AMQP 1.0 guide's examples, compiled here and run by {@code Amqp10ExamplesTest} on RabbitMQ 4. */
final class Amqp10Examples {
    private Amqp10Examples() {
    }

    // tag::amqp-one-connect[]
    /** One environment per process (it owns the AMQP 1.0 client's threads); close it last, on shutdown. */
    static Environment amqp10(String uri) {   // e.g. amqp://guest:guest@localhost:5672/%2F, RabbitMQ 4 or later
        return new AmqpEnvironmentBuilder().connectionSettings().uri(uri).environmentBuilder().build();
    }
    // end::amqp-one-connect[]

    // tag::amqp-one[]
    /** Consumers over AMQP 1.0: a poison message is dead-lettered by the broker, once, whenever a consumer dies. */
    static Amqp10Consumer consume(MongoDatabase db, CachingConnectionFactory rabbit, Connection amqp10, String queue) {
        QueueTopology.declare(rabbit, queue, queue + ".dlq");   // the same quorum queue and DLQ, declared over 0-9-1
        GuardedApplier applier = GuardedApplier.create(db.getCollection("students", BsonDocument.class),
                ReadmeExamples.STUDENTS);
        return Amqp10Consumer.builder(amqp10, applier)
                .options(ConsumerOptions.ofDefaults(queue).withConcurrency(4))   // the same options as OperationConsumer
                .start();                                                       // close() on shutdown
    }

    /** The producer's side, on a declared queue: publish returns once the broker settled each message "accepted". */
    static StampingPublisher publisher(MongoDatabase db, Connection amqp10, String queue) {
        return new StampingPublisher(MongoCounterStamper.create(db.getCollection("seq_counters", BsonDocument.class)),
                Amqp10Publisher.toQueue(amqp10, queue, PublisherOptions.ofDefaults()));
    }
    // end::amqp-one[]
}
