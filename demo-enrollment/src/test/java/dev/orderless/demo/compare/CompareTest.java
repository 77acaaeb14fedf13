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
    private static final CompareWorkload SMALL = new CompareWorkload(Keys.zipf(2_000, 1.1), 400, 11);
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
    void the_oracle_sees_unguarded_competing_consumers_diverge_when_a_held_write_lands_after_newer_ones() {
        // five students; a handler stuck on one consumer holds its older writes while the others apply newer ones
        CompareWorkload hot = new CompareWorkload(Keys.uniform(5), 900, 3);
        TrialResult result = arena.run(new Trial(Contestant.UNGUARDED, false, hot, Fault.STUCK, 3, TWO_MS));

        assertThat(result.outOfOrder()).isPositive();
        assertThat(result.diverged()).isPositive();
    }

    @Test
    void the_other_contestants_run_to_the_end_batched_and_through_a_failover() {
        TrialResult batched = arena.run(new Trial(Contestant.UNGUARDED, true, SMALL, Fault.NONE, 3, TWO_MS));
        TrialResult failover = arena.run(new Trial(Contestant.SINGLE_ACTIVE, false, SMALL, Fault.KILL, 3, TWO_MS));

        assertThat(batched.all().count()).isEqualTo(SMALL.messages());
        assertThat(failover.all().count()).isEqualTo(SMALL.messages());
    }

    @Test
    void each_contestant_is_charged_the_cpu_of_its_own_consumer_threads() {
        TrialResult orderless = arena.run(new Trial(Contestant.ORDERLESS, true, SMALL, Fault.NONE, 3, TWO_MS));
        TrialResult partitioned = arena.run(new Trial(Contestant.PARTITIONED, true, SMALL, Fault.NONE, 3, TWO_MS));

        for (TrialResult result : new TrialResult[] {orderless, partitioned}) {
            assertThat(result.consumerCpu().messages()).as(result.trial().label()).isPositive();
            assertThat(result.consumerCpu().cpuNanos()).as(result.trial().label()).isPositive();
        }
    }

    @Test
    void a_consumer_process_owns_the_threads_it_starts_and_not_its_proxies(MongoBackend mongo, RabbitBackend rabbit) {
        String mongoHost = new com.mongodb.ConnectionString(mongo.connectionString()).getHosts().get(0);
        try (ConsumerProcess process = new ConsumerProcess(0, rabbit.uri(), mongoHost, Duration.ZERO,
                new java.util.concurrent.atomic.AtomicLong())) {
            process.within(() -> process.broker.createConnection());
            process.mongo.getDatabase("compare").runCommand(new org.bson.Document("ping", 1));

            Thread[] threads = new Thread[process.threads.activeCount() + 16];
            java.util.List<String> names = java.util.Arrays.stream(threads, 0, process.threads.enumerate(threads, true))
                    .map(Thread::getName).toList();
            assertThat(names).anyMatch(name -> name.startsWith("AMQP Connection"));
            assertThat(names).noneMatch(name -> name.startsWith("tcp-proxy"));
        }
    }
}
