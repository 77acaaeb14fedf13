package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.InvalidInputException;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Ranked registers: the highest-ranked value assigned above the last delete wins, ties to the higher seq, in any
 * order of delivery; a delete resets it, and brings back an assignment above it that had lost.
 */
@ExtendWith(MongoExtension.class)
class RankedRegistersTest {
    private static final CollectionSchema ORDERS = CollectionSchema.builder()
            .ranked("status", "PLACED", "PAID", "SHIPPED", "DELIVERED", "CANCELLED")
            .register("coupon")
            .build();
    private static final ReferenceModel ORACLE = new ReferenceModel(ORDERS);

    private MongoCollection<BsonDocument> orders;
    private GuardedApplier applier;
    private int trial;

    @BeforeEach
    void setUp(MongoDatabase db) {
        orders = db.getCollection("ranked_orders", BsonDocument.class);
        applier = GuardedApplier.create(orders, ORDERS);
    }

    private static Operation status(String order, long seq, String status) {
        return Operation.assign(order, seq, "status", new BsonString(status));
    }

    @Test
    void a_cancel_stamped_before_a_ship_still_wins_in_every_order() {
        for (List<Integer> order : permutations(4)) {
            String id = "order-" + trial++;
            List<Operation> history = List.of(status(id, 1, "PLACED"), status(id, 2, "PAID"), status(id, 3, "CANCELLED"),
                    status(id, 4, "SHIPPED"));
            order.forEach(i -> applier.apply(history.get(i)));

            assertThat(state(id)).as("order %s", order).isEqualTo(ORACLE.replay(history).get(id));
            assertThat(state(id).registers().get("status").value()).isEqualTo(new BsonString("CANCELLED"));
        }
    }

    @Test
    void a_delete_resets_it_and_brings_back_an_assignment_above_it_that_had_lost_in_every_order() {
        for (List<Integer> order : permutations(4)) {
            String id = "order-" + trial++;
            List<Operation> history = List.of(status(id, 1, "PAID"), status(id, 3, "CANCELLED"), Operation.delete(id, 4),
                    status(id, 5, "PLACED"));
            order.forEach(i -> applier.apply(history.get(i)));

            assertThat(state(id)).as("order %s", order).isEqualTo(ORACLE.replay(history).get(id));
            assertThat(state(id).registers().get("status")).isEqualTo(new EntityState.Register(5, new BsonString("PLACED")));
        }
    }

    @Test
    void the_same_value_twice_is_held_by_the_higher_seq_and_a_redelivery_is_a_duplicate() {
        applier.apply(status("o1", 7, "PAID"));
        applier.apply(status("o1", 4, "PAID"));

        assertThat(state("o1").registers().get("status").seq()).isEqualTo(7);
        assertThat(applier.apply(status("o1", 7, "PAID"))).isEqualTo(Outcome.DUPLICATE);
        assertThat(applier.apply(status("o1", 7, "SHIPPED"))).isEqualTo(Outcome.SEQ_COLLISION);
    }

    @Test
    void an_assignment_outranked_by_a_later_one_is_superseded_and_the_document_keeps_one_candidate() {
        applier.apply(status("o1", 9, "DELIVERED"));

        assertThat(applier.apply(status("o1", 3, "PAID"))).isEqualTo(Outcome.SUPERSEDED);
        assertThat(orders.find(eq("_id", "o1")).first().getDocument("_ranked").getArray("status")).hasSize(1);
    }

    @Test
    void a_value_outside_the_declared_ones_is_bad_input_naming_them() {
        assertThatThrownBy(() -> applier.apply(status("o1", 1, "LOST")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("value of ranked register 'status' must be one of [PLACED, PAID, SHIPPED, DELIVERED,"
                        + " CANCELLED], was \"LOST\" (entity 'o1', seq 1)");
    }

    @Test
    void a_value_written_before_orderless_is_judged_by_its_rank() {
        orders.insertOne(new BsonDocument("_id", new BsonString("o1")).append("status", new BsonString("SHIPPED")));

        assertThat(applier.apply(status("o1", 5, "PAID"))).isEqualTo(Outcome.APPLIED);
        assertThat(state("o1").registers().get("status").value()).as("SHIPPED outranks PAID, at seq 0 too")
                .isEqualTo(new BsonString("SHIPPED"));
        assertThat(applier.apply(status("o1", 6, "DELIVERED"))).isEqualTo(Outcome.APPLIED);
        assertThat(state("o1").registers().get("status")).isEqualTo(new EntityState.Register(6, new BsonString("DELIVERED")));
    }

    @Test
    void an_order_that_gains_a_value_in_the_middle_ranks_what_is_stored_anew() {
        applier.apply(status("o1", 1, "SHIPPED"));
        CollectionSchema withHold = CollectionSchema.builder()
                .ranked("status", "PLACED", "PAID", "ON_HOLD", "SHIPPED", "DELIVERED", "CANCELLED").register("coupon").build();
        GuardedApplier later = GuardedApplier.create(orders, withHold);

        assertThat(later.apply(status("o1", 2, "ON_HOLD"))).isEqualTo(Outcome.APPLIED);

        BsonDocument stored = orders.find(eq("_id", "o1")).first();
        assertThat(EntityState.of(stored, withHold).registers().get("status"))
                .as("SHIPPED outranks ON_HOLD in the order declared now").isEqualTo(new EntityState.Register(1,
                        new BsonString("SHIPPED")));
        assertThat(EntityState.of(stored, withHold)).isEqualTo(new ReferenceModel(withHold)
                .replay(List.of(status("o1", 1, "SHIPPED"), status("o1", 2, "ON_HOLD"))).get("o1"));
    }

    private EntityState state(String id) {
        return EntityState.of(orders.find(eq("_id", id)).first(), ORDERS);
    }

    private static List<List<Integer>> permutations(int n) {
        return dev.orderless.oracle.Histories.permutations(java.util.stream.IntStream.range(0, n).boxed().toList());
    }
}
