package dev.orderless.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.Operation;
import dev.orderless.publish.PublishFailedException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BatchOutcomeTest {
    private final Operation a = Operation.add("s1", 1, "classes", "C1");
    private final Operation b = Operation.add("s2", 2, "classes", "C2");
    private final Operation c = Operation.add("s3", 3, "classes", "C3");
    private final List<Operation> batch = List.of(a, b, c);

    @Test
    void a_batch_published_without_failure_is_all_confirmed_and_the_relay_goes_on() {
        BatchOutcome outcome = BatchOutcome.allConfirmed(batch);

        assertThat(outcome.confirmed()).containsExactly(a, b, c);
        assertThat(outcome.next()).isEqualTo(BatchOutcome.Next.CONTINUE);
    }

    @Test
    void a_failure_naming_no_operation_keeps_every_entry_of_the_batch() {
        BatchOutcome outcome = BatchOutcome.of(batch, new PublishFailedException("connection lost", List.of()));

        assertThat(outcome.confirmed()).isEmpty();
        assertThat(outcome.notTaken()).containsExactly(a, b, c);
        assertThat(outcome.next()).isEqualTo(BatchOutcome.Next.BACK_OFF_NOT_TAKEN);
    }

    @Test
    void only_what_the_failure_does_not_name_is_confirmed() {
        BatchOutcome outcome = BatchOutcome.of(batch, new PublishFailedException("nacked", List.of(b)));

        assertThat(outcome.confirmed()).containsExactly(a, c);
        assertThat(outcome.notTaken()).containsExactly(b);
        assertThat(outcome.why()).isEqualTo("nacked");
    }

    @Test
    void a_refused_entry_is_the_entrys_own_fault_not_the_brokers() {
        BatchOutcome outcome = BatchOutcome.of(batch,
                new PublishFailedException("too long", List.of(b), Map.of(b, "message id too long")));

        assertThat(outcome.refused()).containsOnlyKeys(b);
        assertThat(outcome.notTaken()).isEmpty();
        assertThat(outcome.someConfirmed()).isTrue();
        assertThat(outcome.next()).isEqualTo(BatchOutcome.Next.CONTINUE);
    }

    @Test
    void when_every_message_is_refused_and_none_went_through_the_relay_backs_off() {
        Map<Operation, String> all = Map.of(a, "handler broken", b, "handler broken", c, "handler broken");
        BatchOutcome outcome = BatchOutcome.of(batch, new PublishFailedException("broken", batch, all));

        assertThat(outcome.someConfirmed()).isFalse();
        assertThat(outcome.next()).isEqualTo(BatchOutcome.Next.BACK_OFF_NONE_WENT_THROUGH);
    }

    @Test
    void not_taken_entries_back_off_even_when_others_were_refused() {
        BatchOutcome outcome = BatchOutcome.of(batch,
                new PublishFailedException("both", List.of(a, b), Map.of(a, "too long")));

        assertThat(outcome.refused()).containsOnlyKeys(a);
        assertThat(outcome.notTaken()).containsExactly(b);
        assertThat(outcome.confirmed()).containsExactly(c);
        assertThat(outcome.next()).isEqualTo(BatchOutcome.Next.BACK_OFF_NOT_TAKEN);
    }

    @Test
    void a_refusal_of_an_operation_outside_the_batch_is_ignored() {
        Operation elsewhere = Operation.add("s9", 9, "classes", "C9");
        BatchOutcome outcome = BatchOutcome.of(batch,
                new PublishFailedException("odd", List.of(elsewhere), Map.of(elsewhere, "too long")));

        assertThat(outcome.refused()).isEmpty();
        assertThat(outcome.confirmed()).containsExactly(a, b, c);
    }
}
