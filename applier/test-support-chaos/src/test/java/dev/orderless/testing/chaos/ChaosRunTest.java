package dev.orderless.testing.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChaosRunTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().set(SetField.of("lines", "sku"))
            .counter("items").build();
    private static final OperationGenerator LINES = (random, count) -> {
        Stamps stamps = new Stamps();
        List<Operation> ops = new ArrayList<>();
        while (ops.size() < count) {
            String order = "o" + random.nextInt(5);
            ops.add(Operation.add(order, stamps.next(order), "lines", "sku-" + random.nextInt(9)));
        }
        return ops;
    };

    @Test
    void the_same_seed_draws_the_same_history_in_the_same_order_and_another_seed_another() {
        ChaosRun run = ChaosRun.of(SCHEMA).withOperations(LINES, 200).withDuplicates(0.3);

        ChaosRun.Drawn once = run.withSeed(42).drawn();
        ChaosRun.Drawn again = run.withSeed(42).drawn();
        ChaosRun.Drawn other = run.withSeed(43).drawn();

        assertThat(again.delivery()).isEqualTo(once.delivery());
        assertThat(other.delivery()).isNotEqualTo(once.delivery());
        assertThat(once.delivery()).hasSizeGreaterThan(200).containsAll(once.operations());
    }

    @Test
    void stamps_count_up_per_entity() {
        Stamps stamps = new Stamps();

        assertThat(List.of(stamps.next("a"), stamps.next("b"), stamps.next("a"))).containsExactly(1L, 1L, 2L);
    }

    @Test
    void an_operation_the_schema_does_not_declare_is_named_before_anything_is_published() {
        ChaosRun run = ChaosRun.of(SCHEMA).withHistory(List.of(Operation.increment("o1", 1, "points", 2)));

        assertThatThrownBy(run::drawn).isInstanceOf(InvalidInputException.class).hasMessageContaining("points");
    }

    @Test
    void a_run_without_operations_or_with_a_share_of_duplicates_above_one_is_refused_by_name() {
        assertThatThrownBy(() -> ChaosRun.of(SCHEMA).withDuplicates(1.5))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("duplicates");
        assertThatThrownBy(() -> ChaosRun.of(SCHEMA).run("mongodb://127.0.0.1:1", java.net.URI.create("amqp://x")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("operations are required");
    }
}
