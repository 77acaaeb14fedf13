package dev.orderless.demo.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every contestant of {@code compare} once, on a small workload, on the real RabbitMQ (quorum queues and
 * single active consumers: skipped on the embedded broker). Correctness only: how fast is the benchmark's.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class CompareTest {
    private static final CompareWorkload SMALL = new CompareWorkload(Keys.zipf(2_000, 1.1), 600, 11);
    private static final Duration TWO_MS = Duration.ofMillis(2);
    private Arena arena;

    @BeforeEach
    void arena(MongoBackend mongo, RabbitBackend rabbit) {
        assumeTrue(rabbit.isRabbitMq(), "compare needs RabbitMQ's quorum queues and single active consumers");
        arena = new Arena(rabbit.uri(), mongo.connectionString(), Duration.ofSeconds(2), 300, Duration.ofMinutes(2));
    }

    @AfterEach
    void close() {
        if (arena != null) {
            arena.close();
        }
    }

    @Test
    void orderless_converges_under_every_fault() {
        for (Fault fault : Fault.values()) {
            TrialResult result = arena.run(new Trial(Contestant.ORDERLESS, true, SMALL, fault,
                    fault == Fault.SCALE_OUT ? 4 : 3, TWO_MS));

            assertThat(result.diverged()).as(fault.label).isZero();
        }
    }

    @Test
    void in_order_contestants_write_in_seq_order_and_converge_without_a_fault() {
        for (Contestant contestant : new Contestant[] {Contestant.SINGLE_ACTIVE, Contestant.PARTITIONED}) {
            for (boolean batched : new boolean[] {false, true}) {
                TrialResult result = arena.run(new Trial(contestant, batched, SMALL, Fault.NONE, 3, TWO_MS));

                assertThat(result.outOfOrder()).as(result.trial().label()).isZero();
                assertThat(result.diverged()).as(result.trial().label()).isZero();
            }
        }
    }

    @Test
    void the_oracle_sees_unguarded_competing_consumers_diverge_when_their_writes_arrive_out_of_order() {
        // five students: renames of one student reach three consumers at once, so writes overtake each other
        CompareWorkload hot = new CompareWorkload(Keys.uniform(5), 1200, 3);
        TrialResult result = arena.run(new Trial(Contestant.UNGUARDED, false, hot, Fault.NONE, 3, TWO_MS));

        assertThat(result.outOfOrder()).isPositive();
        assertThat(result.diverged()).isPositive();
    }
}
