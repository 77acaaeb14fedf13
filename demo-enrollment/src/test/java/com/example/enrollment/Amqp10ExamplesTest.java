package com.example.enrollment;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import dev.orderless.amqp10.Amqp10Consumer;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.OnRabbitMq4;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/** The AMQP 1.0 guide's examples on RabbitMQ 4: a leave published before its enrollment still ends not enrolled. */
@OnRabbitMq4
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class Amqp10ExamplesTest {

    @Test
    void the_amqp_1_0_examples_carry_actions_from_the_publisher_to_the_document_in_any_order(MongoDatabase db,
                                                                                           RabbitBackend rabbit) {
        String queue = RabbitExtension.uniqueQueue("amqp10-guide");
        CachingConnectionFactory cf = ReadmeExamples.rabbit(rabbit.uri().toString());
        try (Environment environment = Amqp10Examples.amqp10(rabbit.uri().toString());
             Connection connection = environment.connectionBuilder().build()) {
            try (Amqp10Consumer consumer = Amqp10Examples.consume(db, cf, connection, queue)) {
                StampingPublisher publisher = Amqp10Examples.publisher(db, connection, queue);   // once declared
                publisher.publish("student-17", seq -> Operation.add("student-17", seq, "classes", "math-101"));
                Operation left = publisher.publish("student-17",
                        seq -> Operation.remove("student-17", seq, "classes", "math-101"));
                Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    BsonDocument stored = db.getCollection("students", BsonDocument.class).find().first();
                    assertThat(stored).isNotNull();
                    EntityState student = EntityState.of(stored, ReadmeExamples.STUDENTS);
                    assertThat(student.live().getOrDefault("classes", Map.of())).isEmpty();
                    assertThat(student.tombstones().get("classes")).containsEntry("math-101", left.seq());
                });
            }
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
            cf.destroy();
        }
    }
}
