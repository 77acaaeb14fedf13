package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.PropertyCheck;
import dev.orderless.testing.RandomBson;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/** Values of every BSON type, published by a producer and applied by competing consumers, stored as they were sent. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ValueTypesEndToEndTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().register("value")
            .set(SetField.of("items", "k")).build();

    @Test
    void every_bson_value_goes_through_the_broker_and_the_consumers_with_its_type(ConnectionFactory cf,
                                                                                  MongoDatabase db, MongoBackend backend) {
        AtomicInteger handled = new AtomicInteger();
        AtomicInteger entities = new AtomicInteger();
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "typed", SCHEMA)) {
            fixture.start(fixture.options(2).withBatch(10, Duration.ofMillis(20)));
            PropertyCheck.forAll("a value through publisher, broker, consumers and MongoDB", 8, random -> {
                RandomBson values = RandomBson.from(random).storableOn(backend);
                List<BsonValue> drawn = new ArrayList<>();
                RandomBson.TYPES.forEach(type -> drawn.add(values.value(type)));
                return drawn;
            }).check((drawn, seed) -> {
                List<Operation> ops = new ArrayList<>();
                List<String> ids = new ArrayList<>();
                for (BsonValue value : drawn) {
                    String entity = "e" + entities.incrementAndGet();
                    ids.add(entity);
                    ops.add(Operation.add(entity, 2, "items", "x", new BsonDocument("a", value)));
                    ops.add(Operation.assign(entity, 1, "value", value));
                }
                fixture.publish(ops);
                fixture.awaitHandled(handled.addAndGet(ops.size()), Duration.ofSeconds(60));

                for (int i = 0; i < drawn.size(); i++) {
                    BsonDocument stored = fixture.collection.find(Filters.eq("_id", ids.get(i))).first();
                    assertThat(stored.get("value")).as("the register, sent as %s", drawn.get(i)).isEqualTo(drawn.get(i));
                    assertThat(stored.getArray("items").get(0).asDocument().get("a")).as("the attribute")
                            .isEqualTo(drawn.get(i));
                }
            });
            assertThat(fixture.deadLettered()).isZero();
        }
    }
}
