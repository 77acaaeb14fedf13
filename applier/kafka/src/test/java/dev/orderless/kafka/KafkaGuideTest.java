package dev.orderless.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.kafka.EmbeddedKafka;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The guide's example (docs/guide/kafka.md), run as written on a real broker: it converges whatever the order. */
@Tag("kafka")
@ExtendWith(MongoExtension.class)
class KafkaGuideTest {
    @Test
    void the_guides_wiring_applies_an_enroll_and_a_drop_taken_in_either_order(MongoDatabase db) {
        CollectionSchema schema = CollectionSchema.builder().set(SetField.of("classes", "name")).register("name").build();
        MongoCollection<BsonDocument> students = db.getCollection("students", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(students, schema);
        try (EmbeddedKafka broker = EmbeddedKafka.start()) {
            String bootstrapServers = broker.bootstrapServers();
            // tag::kafka-consumer[]
            Map<String, Object> kafka = Map.of("bootstrap.servers", bootstrapServers);
            ShareConsumerOptions options = ShareConsumerOptions.ofDefaults("enrollment.ops", "enrollment")
                    .withConcurrency(4);
            // the topic, its dead-letter topic (enrollment.ops.dlt), the share group from the earliest record
            KafkaTopology.declare(kafka, options, 2);

            try (KafkaOperationPublisher publisher = KafkaOperationPublisher.start(kafka, options.topic());
                 ShareGroupConsumer consumer = ShareGroupConsumer.builder(kafka, applier).options(options).start()) {
                // the drop first: four consumers take them in any order, the seq decides
                publisher.publishAll(List.of(
                        Operation.remove("student-1", 2, "classes", "CS 101"),
                        Operation.add("student-1", 1, "classes", "CS 101"),
                        Operation.assign("student-1", 3, "name", new BsonString("Ada"))));
                // ...
            // end::kafka-consumer[]
                Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> students.countDocuments() == 1
                        && students.find().first().containsKey("name"));
                BsonDocument student = students.find().first();
                assertThat(student.getArray("classes", new BsonArray())).as("dropped").isEmpty();
                assertThat(student.getString("name").getValue()).isEqualTo("Ada");
                assertThat(consumer.isRunning()).isTrue();
            }
        }
    }
}
