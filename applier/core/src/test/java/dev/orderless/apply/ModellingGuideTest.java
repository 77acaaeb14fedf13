package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The worked orders example of docs/guide/modelling.md, run: it converges in every order the test tries. */
@ExtendWith(MongoExtension.class)
class ModellingGuideTest {

    // tag::orders-schema[]
    /** An order: lines with their quantity, a coupon, a status, and how many items it holds in all. */
    static final CollectionSchema ORDERS = CollectionSchema.builder()
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
                Operation.add(order, 1, "lines", "sku-1", line(2, 1250)),
                Operation.increment(order, 2, "items", 2),
                Operation.add(order, 3, "lines", "sku-7", line(1, 4900)),
                Operation.increment(order, 4, "items", 1),
                Operation.assign(order, 5, "coupon", new BsonString("WELCOME10")),
                Operation.remove(order, 6, "lines", "sku-1"),          // the customer drops the first line
                Operation.increment(order, 7, "items", -2),
                Operation.assign(order, 8, "status", new BsonString("CANCELLED")),  // the customer cancels...
                Operation.assign(order, 9, "status", new BsonString("PAID")));      // ...as the payment lands
    }

    static BsonDocument line(long quantity, long priceCents) {
        return new BsonDocument("quantity", new BsonInt64(quantity)).append("price", new BsonInt64(priceCents));
    }
    // end::orders-history[]

    @Test
    void the_orders_example_converges_whatever_the_order_and_the_duplicates(MongoDatabase db) {
        MongoCollection<BsonDocument> orders = db.getCollection("orders", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(orders, ORDERS);
        Random random = new Random(39);
        for (int trial = 0; trial < 20; trial++) {
            String order = "order-" + trial;
            List<Operation> delivered = new ArrayList<>(history(order));
            delivered.addAll(history(order).subList(0, 4));   // redeliveries
            Collections.shuffle(delivered, random);

            delivered.forEach(applier::apply);

            BsonDocument stored = orders.find(new BsonDocument("_id", new BsonString(order))).first();
            assertThat(EntityState.of(stored, ORDERS)).isEqualTo(new ReferenceModel(ORDERS).replay(history(order))
                    .get(order));
            assertThat(stored.getInt64("items").getValue()).as("a plain read").isEqualTo(1);
            assertThat(stored.getString("coupon").getValue()).isEqualTo("WELCOME10");
            assertThat(stored.getString("status").getValue()).as("nothing overrides a cancel").isEqualTo("CANCELLED");
        }
    }
}
