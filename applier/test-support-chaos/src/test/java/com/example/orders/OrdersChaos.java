package com.example.orders;

// tag::imports[]
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.message.Envelope;
import dev.orderless.testing.chaos.ChaosResult;
import dev.orderless.testing.chaos.ChaosRun;
import dev.orderless.testing.chaos.ChaosView;
import dev.orderless.testing.chaos.ConsumerFactory;
import dev.orderless.testing.chaos.Fault;
import dev.orderless.testing.chaos.OperationGenerator;
import dev.orderless.testing.chaos.Stamps;
import dev.orderless.view.ViewProjection;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonArray;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
// end::imports[]

/** The examples of docs/guide/testing-your-domain.md: the modelling guide's orders, under chaos. */
final class OrdersChaos {
    private OrdersChaos() {
    }

    // tag::schema[]
    static final CollectionSchema ORDERS = CollectionSchema.builder()
            .set(SetField.of("lines", "sku"))
            .register("coupon")
            .ranked("status", "PLACED", "PAID", "SHIPPED", "DELIVERED", "CANCELLED")
            .counter("items")
            .build();
    // end::schema[]

    // tag::generator[]
    /**
     * What the order service sends, as it sends it: it knows each order's lines, so a line added is an add and an
     * increment of its quantity, a line dropped a remove and the increment back; coupons, statuses, and now and
     * then an order deleted.
     */
    static final OperationGenerator ORDER_SERVICE = (random, count) -> {
        Stamps stamps = new Stamps();
        Map<String, Map<String, Long>> lines = new HashMap<>();   // order -> sku -> quantity
        List<Operation> ops = new ArrayList<>();
        String[] statuses = {"PLACED", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"};
        while (ops.size() < count) {
            String order = "order-" + random.nextInt(40);
            String sku = "sku-" + random.nextInt(8);
            Map<String, Long> its = lines.computeIfAbsent(order, o -> new HashMap<>());
            int action = random.nextInt(100);
            if (action < 40 && !its.containsKey(sku)) {
                long quantity = 1 + random.nextInt(3);
                its.put(sku, quantity);
                ops.add(Operation.add(order, stamps.next(order), "lines", sku,
                        new BsonDocument("quantity", new BsonInt64(quantity))));
                ops.add(Operation.increment(order, stamps.next(order), "items", quantity));
            } else if (action < 65 && its.containsKey(sku)) {
                ops.add(Operation.remove(order, stamps.next(order), "lines", sku));
                ops.add(Operation.increment(order, stamps.next(order), "items", -its.remove(sku)));
            } else if (action < 80) {
                ops.add(Operation.assign(order, stamps.next(order), "coupon", new BsonString("SAVE" + action)));
            } else if (action < 97) {
                ops.add(Operation.assign(order, stamps.next(order), "status",
                        new BsonString(statuses[random.nextInt(statuses.length)])));
            } else {
                ops.add(Operation.delete(order, stamps.next(order)));
                lines.remove(order);
            }
        }
        return ops.subList(0, count);
    };
    // end::generator[]

    // tag::view[]
    /** A view: for each sku, the orders that hold it, with their quantity. */
    static final ViewProjection ORDERS_BY_SKU = (order, version) -> {
        String id = order.getString("_id").getValue();
        List<Operation> ops = new ArrayList<>();
        for (BsonValue line : order.getArray("lines", new BsonArray())) {
            ops.add(Operation.add(line.asDocument().getString("sku").getValue(), version, "orders", id,
                    new BsonDocument("quantity", line.asDocument().get("quantity"))));
        }
        for (BsonValue line : order.getArray("deleted_lines", new BsonArray())) {
            ops.add(Operation.remove(line.asDocument().getString("sku").getValue(), version, "orders", id));
        }
        return ops;
    };

    static final ChaosView SKUS = new ChaosView("skus", CollectionSchema.builder()
            .set(new SetField("orders", "removed_orders", "id")).build(), ORDERS_BY_SKU);
    // end::view[]

    // tag::run[]
    static ChaosResult ordersUnderChaos(String mongo, URI rabbit) {
        ChaosResult result = ChaosRun.of(ORDERS)
                .withName("orders")
                .withCollection("orders")
                .withOperations(ORDER_SERVICE, 2000)
                .withDuplicates(0.3)
                .withConsumers(4, ConsumerFactory.standard(ORDERS))   // or a factory that builds yours
                .withFaults(Fault.KILL_CONSUMER)
                .withView(SKUS)                                       // checked against the final orders
                .run(mongo, rabbit);
        result.print(System.out);
        return result;
    }
    // end::run[]

    // tag::broken-handler[]
    /**
     * A consumer of a team's own that handles coupons itself, with a plain $set of the value and its seq: right
     * when messages arrive in order, wrong when an older coupon arrives last.
     */
    static final ConsumerFactory OWN_CONSUMER = context -> {
        MongoCollection<BsonDocument> orders = context.database().getCollection(context.collection(),
                BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(orders, ORDERS);
        Envelope envelope = Envelope.ofDefaults();
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(context.connectionFactory());
        container.setQueueNames(context.queue());
        container.setConcurrentConsumers(context.concurrency());
        container.setMessageListener(message -> {
            Operation op = envelope.decode(message.getBody());
            if (op instanceof Operation.Assign coupon && coupon.field().equals("coupon")) {
                orders.updateOne(Filters.eq("_id", op.entity()), Updates.combine(   // the bug: no seq guard
                        Updates.set("coupon", coupon.value()), Updates.set("_seq.coupon", op.seq())),
                        new UpdateOptions().upsert(true));
            } else {
                applier.apply(op);
            }
        });
        container.start();
        return container::stop;
    };

    static ChaosResult ownConsumerUnderChaos(String mongo, URI rabbit) {
        ChaosResult result = ChaosRun.of(ORDERS)
                .withName("orders, own consumer")
                .withCollection("orders")
                .withOperations(ORDER_SERVICE, 400)
                .withConsumers(2, OWN_CONSUMER)
                .run(mongo, rabbit);
        result.print(System.out);   // the table, and the smallest history that breaks it
        return result;
    }
    // end::broken-handler[]
}
