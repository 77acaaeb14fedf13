package com.example.enrollment;

import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.broker.QueueTopology;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

// tag::user-test[]
@ExtendWith({MongoExtension.class, RabbitExtension.class})   // orderless-test-support, at test scope
class YourOwnTest {

    @Test
    void an_enrollment_published_to_the_queue_is_applied(MongoDatabase db, ConnectionFactory rabbit) {
        // a fresh database per test; one broker per run, embedded unless RABBITMQ_URI names one
        String queue = RabbitExtension.uniqueQueue("enrollments");
        QueueTopology.declare(rabbit, queue, queue + ".dlq");
        GuardedApplier applier = GuardedApplier.create(db.getCollection("students", BsonDocument.class),
                ReadmeExamples.STUDENTS);
        try (OperationConsumer consumer = OperationConsumer.builder(rabbit, applier)
                .options(ConsumerOptions.ofDefaults(queue)).start()) {
            ConfirmingPublisher.toQueue(rabbit, queue, PublisherOptions.ofDefaults())
                    .publish(Operation.add("student-17", 1, "classes", "CS 101"));

            Awaitility.await().atMost(Duration.ofSeconds(30))
                    .until(() -> db.getCollection("students").countDocuments() == 1);
        }
    }
}
// end::user-test[]
