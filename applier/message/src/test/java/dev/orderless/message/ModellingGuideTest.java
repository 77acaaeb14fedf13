package dev.orderless.message;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The worked orders example of docs/guide/modelling.md, run as a team runs it: every operation through the envelope
 * (encoded by the producer, decoded by the consumer), applied in every order the test tries, stored with the types
 * the order service gave its values.
 */
@ExtendWith(MongoExtension.class)
class ModellingGuideTest {

    // tag::orders-schema[]
    /** An order: when it was placed, lines with their quantity and price, a coupon, a status, how many items in all. */
    static final CollectionSchema ORDERS = CollectionSchema.builder()
            .register("placedAt")               // a date
            .set(SetField.of("lines", "sku"))   // a set with attributes: each line's quantity and price
            .register("coupon")                 // last writer (by seq) wins
            .ranked("status", "PLACED", "PAID", "SHIPPED", "DELIVERED", "CANCELLED")   // only moves forward
            .counter("items")                   // a sum of increments: +quantity on a line added, - on removed
            .build();
    // end::orders-schema[]

    // tag::orders-history[]
    /** What the order service stamps, in seq order: every action is one operation, or two that commute. */
    static List<Operation> history(String order) {
        return List.of(
                Operation.assign(order, 1, "placedAt", date("2026-11-29T10:15:00Z")),
                Operation.add(order, 2, "lines", "sku-1", line(2, "12.50")),
                Operation.increment(order, 3, "items", 2),
                Operation.add(order, 4, "lines", "sku-7", line(1, "49.00")),
                Operation.increment(order, 5, "items", 1),
                Operation.assign(order, 6, "coupon", new BsonString("WELCOME10")),
                Operation.remove(order, 7, "lines", "sku-1"),          // the customer drops the first line
                Operation.increment(order, 8, "items", -2),
                Operation.assign(order, 9, "status", new BsonString("CANCELLED")),  // the customer cancels...
                Operation.assign(order, 10, "status", new BsonString("PAID")));     // ...as the payment lands
    }

    /** A line: its quantity a 64-bit integer, its price a decimal (money is never a double). */
    static BsonDocument line(long quantity, String price) {
        return new BsonDocument("quantity", new BsonInt64(quantity))
                .append("price", new BsonDecimal128(Decimal128.parse(price)));
    }

    static BsonDateTime date(String instant) {
        return new BsonDateTime(Instant.parse(instant).toEpochMilli());
    }
    // end::orders-history[]

    @Test
    void the_orders_example_converges_through_the_envelope_whatever_the_order_and_the_duplicates(MongoDatabase db) {
        MongoCollection<BsonDocument> orders = db.getCollection("orders", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(orders, ORDERS);
        Envelope envelope = new Envelope();
        Random random = new Random(39);
        for (int trial = 0; trial < 20; trial++) {
            String order = "order-" + trial;
            List<Operation> delivered = new ArrayList<>(history(order));
            delivered.addAll(history(order).subList(0, 4));   // redeliveries
            Collections.shuffle(delivered, random);

            // the producer encodes, the consumer decodes: what the consumer applies is what the service stamped
            delivered.forEach(op -> applier.apply(envelope.decode(envelope.encode(op))));

            BsonDocument stored = orders.find(new BsonDocument("_id", new BsonString(order))).first();
            assertThat(EntityState.of(stored, ORDERS)).isEqualTo(new ReferenceModel(ORDERS).replay(history(order))
                    .get(order));
            assertThat(stored.getInt64("items").getValue()).as("a plain read").isEqualTo(1);
            assertThat(stored.getString("coupon").getValue()).isEqualTo("WELCOME10");
            assertThat(stored.getString("status").getValue()).as("nothing overrides a cancel").isEqualTo("CANCELLED");
            assertThat(stored.get("placedAt")).as("a date, stored as one").isEqualTo(date("2026-11-29T10:15:00Z"));
            BsonDocument line = stored.getArray("lines").get(0).asDocument();
            assertThat(line.get("quantity").getBsonType()).isEqualTo(BsonType.INT64);
            assertThat(line.get("price")).as("a decimal, stored as one")
                    .isEqualTo(new BsonDecimal128(Decimal128.parse("49.00")));
        }
    }
}
