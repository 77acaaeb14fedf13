package dev.orderless.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.history.Vouching.Stage;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** {@link Vouching}: a history answers only on the safe path, and off it names the call that puts it there. */
class VouchingTest {
    private static final Supplier<Stage> NOT_ASKED = () -> {
        throw new AssertionError("the stage was read where it decides nothing");
    };

    private static Optional<String> unvouched(boolean knowsLive, boolean takenIn, Supplier<Stage> stage) {
        return Vouching.unvouched("orders_history", "order-1", knowsLive, takenIn, stage);
    }

    @Test
    void a_history_that_does_not_know_its_live_collection_vouches_for_nothing_and_names_with_live() {
        assertThat(unvouched(false, false, NOT_ASKED)).hasValueSatisfying(reason -> assertThat(reason)
                .contains("orders_history does not know its live collection")
                .contains("History.of(...).withLive(collection)").contains("History.beginBaseline(start)"));
        assertThat(unvouched(false, true, NOT_ASKED)).as("even an entity a baseline took in").isPresent();
    }

    @Test
    void a_history_whose_start_was_never_decided_names_begin_baseline_and_the_boot_property() {
        assertThat(unvouched(true, false, () -> Stage.UNDECIDED)).hasValueSatisfying(reason -> assertThat(reason)
                .contains("how the history orders_history starts was never decided")
                .contains("History.beginBaseline(Start.DETECT)").contains("orderless.history.baseline.enabled"));
    }

    @Test
    void while_the_baseline_is_under_way_an_entity_it_has_not_taken_in_is_not_vouched_for() {
        assertThat(unvouched(true, false, () -> Stage.UNDER_WAY)).hasValueSatisfying(reason -> assertThat(reason)
                .contains("has not taken 'order-1' in yet").contains("HistoryBaseline.runIfDue"));
    }

    @Test
    void an_entity_the_baseline_took_in_or_any_once_it_is_complete_is_vouched_for_here() {
        assertThat(unvouched(true, true, NOT_ASKED)).as("taken in: no read of the stage").isEmpty();
        assertThat(unvouched(true, false, () -> Stage.COMPLETE)).isEmpty();
    }
}
