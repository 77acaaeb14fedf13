package dev.orderless.demo.compare;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.Operation;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrialResultTest {
    private static final long MS = 1_000_000;
    private final List<Operation> ops = List.of(Operation.add("s1", 1, "classes", "C1"),
            Operation.add("s1", 2, "classes", "C2"), Operation.add("s2", 3, "classes", "C1"));

    @Test
    void the_longest_stall_is_the_longest_a_waiting_student_went_without_an_apply() {
        Tally tally = new Tally(3);
        tally.published(0, 0);
        tally.published(1, 10 * MS);
        tally.published(2, 10 * MS);
        tally.applied(0, "s1", 1, 5 * MS);
        tally.applied(1, "s1", 2, 40 * MS);
        tally.applied(2, "s2", 3, 12 * MS);

        assertThat(TrialResult.longestStall(ops, tally, 0)).isEqualTo(30 * MS);
    }

    @Test
    void a_stall_counts_from_the_moment_every_consumer_was_up_even_for_messages_applied_before() {
        Tally tally = new Tally(3);
        tally.published(0, 0);
        tally.published(1, 0);
        tally.published(2, 0);
        tally.applied(0, "s1", 1, 50 * MS);    // applied while the other consumers were still starting
        tally.applied(1, "s1", 2, 120 * MS);
        tally.applied(2, "s2", 3, 110 * MS);

        assertThat(TrialResult.longestStall(ops, tally, 100 * MS)).isEqualTo(20 * MS);
    }

    @Test
    void a_write_with_a_lower_seq_after_a_higher_one_of_the_same_student_is_out_of_order() {
        Tally tally = new Tally(3);
        tally.applied(1, "s1", 2, 1);
        tally.applied(0, "s1", 1, 2);
        tally.applied(2, "s2", 3, 3);

        assertThat(tally.outOfOrder()).isEqualTo(1);
    }
}
