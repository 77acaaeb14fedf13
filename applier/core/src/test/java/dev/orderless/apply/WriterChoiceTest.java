package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** {@link WriterChoice}: which writes of a round go together, with no backend. */
class WriterChoiceTest {

    private static WriterChoice.Choice choose(Operation... ops) {
        Map<Integer, Operation> candidates = new LinkedHashMap<>();
        for (int i = 0; i < ops.length; i++) {
            candidates.put(i, ops[i]);
        }
        return WriterChoice.choose(candidates);
    }

    @Test
    void writes_on_different_slots_of_one_entity_all_go_together() {
        WriterChoice.Choice choice = choose(Operation.add("s1", 1, "classes", "CS 101"),
                Operation.add("s1", 2, "classes", "CS 102"), Operation.assign("s1", 3, "name", new BsonString("Ada")),
                Operation.add("s2", 1, "classes", "CS 101"));

        assertThat(choice.writers()).containsExactly(0, 1, 2, 3);
        assertThat(choice.followers()).isEmpty();
        assertThat(choice.waiting()).isEmpty();
    }

    @Test
    void on_one_slot_the_highest_seq_writes_and_the_lower_ones_follow_it() {
        WriterChoice.Choice choice = choose(Operation.add("s1", 1, "classes", "CS 101"),
                Operation.remove("s1", 7, "classes", "CS 101"), Operation.add("s1", 4, "classes", "CS 101"));

        assertThat(choice.writers()).containsExactly(1);
        assertThat(choice.followersOf(1)).containsExactlyInAnyOrder(0, 2);
        assertThat(choice.waiting()).isEmpty();
    }

    @Test
    void the_same_seq_twice_on_one_slot_waits_for_a_read() {
        WriterChoice.Choice choice = choose(Operation.assign("s1", 5, "name", new BsonString("Ada")),
                Operation.assign("s1", 5, "name", new BsonString("Grace")));

        assertThat(choice.writers()).containsExactly(0);
        assertThat(choice.followersOf(0)).isEmpty();
        assertThat(choice.waiting()).containsExactly(1);
    }

    @Test
    void a_delete_shares_its_round_with_no_other_write_of_its_entity() {
        WriterChoice.Choice choice = choose(Operation.add("s1", 9, "classes", "CS 101"), Operation.delete("s1", 6),
                Operation.assign("s2", 3, "name", new BsonString("Ada")));

        assertThat(choice.writers()).containsExactly(0, 2);
        assertThat(choice.waiting()).containsExactly(1);
    }

    @Test
    void the_highest_seq_of_an_entity_with_a_delete_writes_first_even_when_it_is_the_delete() {
        WriterChoice.Choice choice = choose(Operation.add("s1", 2, "classes", "CS 101"), Operation.delete("s1", 6),
                Operation.assign("s1", 4, "name", new BsonString("Ada")));

        assertThat(choice.writers()).containsExactly(1);
        assertThat(choice.waiting()).containsExactlyInAnyOrder(0, 2);
    }

    @Test
    void elements_of_different_sets_with_the_same_key_are_different_slots() {
        assertThat(WriterChoice.slot(Operation.add("s1", 1, "classes", "x")))
                .isNotEqualTo(WriterChoice.slot(Operation.add("s1", 1, "clubs", "x")))
                .isEqualTo(WriterChoice.slot(Operation.remove("s1", 2, "classes", "x")));
        assertThat(List.of(WriterChoice.slot(Operation.assign("s1", 1, "classes", new BsonString("x")))))
                .doesNotContain(WriterChoice.slot(Operation.add("s1", 1, "classes", "x")));
    }
}
