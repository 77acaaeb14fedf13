package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.chaos.ChaosResult;
import dev.orderless.testing.chaos.Counterexample;
import dev.orderless.testing.rabbit.RabbitExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * docs/guide/testing-your-domain.md, run: a team's orders under chaos with every fault, and a team's broken consumer
 * caught ({@link OrdersConvergeTest} runs the guide's first run).
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OrdersChaosTest {

    @Test
    void the_orders_converge_with_the_consumers_broker_and_mongodb_connections_cut(MongoBackend mongo,
                                                                                   RabbitBackend rabbit) {
        ChaosResult result = dev.orderless.testing.chaos.ChaosRun.of(OrdersChaos.ORDERS).withName("orders, cut")
                .withOperations(OrdersChaos.ORDER_SERVICE, 500).withDuplicates(0.2)
                .withConsumers(3, dev.orderless.testing.chaos.ConsumerFactory.standard(OrdersChaos.ORDERS))
                .withFaults(dev.orderless.testing.chaos.Fault.values())
                .run(mongo.connectionString(), rabbit.uri());
        result.print(System.out);

        assertThat(result.faults()).containsExactly("consumer killed", "broker cut 2s",
                "MongoDB cut 2s");
        assertThat(result.converged()).as("diverged %s, lost %d", result.divergedIds(), result.lost()).isTrue();
    }

    @Test
    void a_consumer_that_sets_a_register_without_its_seq_guard_is_caught_with_a_history_of_at_most_5_messages(
            MongoBackend mongo, RabbitBackend rabbit) {
        ChaosResult result = OrdersChaos.ownConsumerUnderChaos(mongo.connectionString(), rabbit.uri());

        assertThat(result.diverged()).isPositive();
        Counterexample smallest = result.counterexample().orElseThrow();
        assertThat(smallest.size()).as("shrunk from %d messages in %d steps", smallest.startedWith(), smallest.steps())
                .isLessThanOrEqualTo(5);
        assertThat(smallest.delivery()).as("the coupons, the older delivered last")
                .allSatisfy(op -> assertThat(op.toString()).contains("coupon"));
        System.out.printf("[chaos] the broken consumer: %d entities diverged; shrunk from %d messages to %d in %d"
                + " steps%n", result.diverged(), smallest.startedWith(), smallest.size(), smallest.steps());
    }
}
