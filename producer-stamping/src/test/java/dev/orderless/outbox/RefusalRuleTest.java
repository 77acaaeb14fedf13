package dev.orderless.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RefusalRuleTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void a_refusal_counts_when_other_entries_of_its_batch_went_through() {
        assertThat(RefusalRule.counts(true, Optional.empty(), Instant.MIN)).isTrue();
    }

    @Test
    void a_first_refusal_with_nothing_going_through_does_not_count() {
        assertThat(RefusalRule.counts(false, Optional.empty(), T0)).isFalse();
    }

    @Test
    void a_refusal_counts_when_the_relay_had_an_entry_confirmed_since_the_previous_one() {
        assertThat(RefusalRule.counts(false, Optional.of(T0), T0.plusSeconds(1))).isTrue();
    }

    @Test
    void a_fault_that_stops_every_message_never_counts_against_an_entry() {
        assertThat(RefusalRule.counts(false, Optional.of(T0.plusSeconds(5)), T0)).isFalse();
        assertThat(RefusalRule.counts(false, Optional.of(T0), Instant.MIN)).isFalse();
    }

    @Test
    void an_entry_is_parked_once_its_counted_refusals_reach_the_limit() {
        RefusalRule rule = new RefusalRule(3);

        assertThat(rule.parks(2)).isFalse();
        assertThat(rule.parks(3)).isTrue();
    }

    @Test
    void a_repeated_refusal_that_does_not_count_is_not_worth_a_warning() {
        assertThat(RefusalRule.worthAWarning(Optional.empty(), false)).isTrue();
        assertThat(RefusalRule.worthAWarning(Optional.of(T0), true)).isTrue();
        assertThat(RefusalRule.worthAWarning(Optional.of(T0), false)).isFalse();
    }

    @Test
    void a_limit_below_one_is_refused() {
        assertThatThrownBy(() -> new RefusalRule(0)).hasMessageContaining("parkAfter must be at least 1");
    }
}
