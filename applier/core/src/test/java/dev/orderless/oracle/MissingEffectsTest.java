package dev.orderless.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** What {@code verify} and the chaos kit count as lost: effects the oracle's state shows and the stored state lacks. */
class MissingEffectsTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder()
            .set(SetField.of("classes", "name")).register("name").build();
    private static final ReferenceModel MODEL = new ReferenceModel(SCHEMA);
    private static final List<Operation> HISTORY = List.of(
            Operation.add("s1", 1, "classes", "CS 101"),
            Operation.assign("s1", 2, "name", new BsonString("Ada")),
            Operation.assign("s1", 3, "name", new BsonString("Grace")),
            Operation.remove("s1", 4, "classes", "CS 101"),
            Operation.add("s2", 1, "classes", "CS 102"),
            Operation.delete("s3", 5));

    @Test
    void equal_states_miss_nothing() {
        Map<String, EntityState> expected = MODEL.replay(HISTORY);
        assertThat(ReferenceModel.missingEffects(expected, MODEL.replay(HISTORY))).isZero();
    }

    @Test
    void a_lost_operation_whose_effect_survives_is_counted_once() {
        List<Operation> delivered = new ArrayList<>(HISTORY);
        delivered.remove(2);   // the rename to Grace: the final name is its effect
        assertThat(ReferenceModel.missingEffects(MODEL.replay(HISTORY), MODEL.replay(delivered))).isEqualTo(1);
    }

    @Test
    void a_lost_operation_that_a_later_one_overwrote_leaves_nothing_to_miss() {
        List<Operation> delivered = new ArrayList<>(HISTORY);
        delivered.remove(1);   // the rename to Ada, overwritten by Grace
        assertThat(ReferenceModel.missingEffects(MODEL.replay(HISTORY), MODEL.replay(delivered))).isZero();
    }

    @Test
    void a_counter_counted_twice_diverges_and_misses_nothing() {
        ReferenceModel counting = new ReferenceModel(CollectionSchema.builder().counter("credits").build());
        List<Operation> once = List.of(Operation.increment("s1", 1, "credits", 3),
                Operation.increment("s1", 2, "credits", 4));
        Map<String, EntityState> expected = counting.replay(once);
        // what a consumer that applies a redelivered increment again leaves: 3 + 4 + 4
        Map<String, EntityState> stored = Map.of("s1", new EntityState("s1", 0, Map.of(), Map.of(), Map.of(),
                Map.of("credits", java.math.BigInteger.valueOf(11))));

        assertThat(ReferenceModel.diverged(expected, stored)).containsExactly("s1");
        assertThat(ReferenceModel.missingEffects(expected, stored)).as("nothing is missing: one is too many").isZero();
    }

    @Test
    void an_entity_missing_altogether_misses_every_surviving_effect() {
        Map<String, EntityState> expected = MODEL.replay(HISTORY);
        Map<String, EntityState> stored = MODEL.replay(HISTORY.subList(0, 4));
        assertThat(ReferenceModel.missingEffects(expected, stored)).as("s2's add and s3's delete").isEqualTo(2);
    }
}
