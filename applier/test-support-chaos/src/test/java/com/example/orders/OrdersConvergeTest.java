package com.example.orders;

// tag::plain-junit[]
import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.chaos.ChaosResult;
import dev.orderless.testing.rabbit.RabbitExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The orders under chaos in a plain JUnit 5 test. The two extensions (orderless-test-support, which the chaos kit
 * brings) resolve the parameters: the MongoDB and the broker that MONGODB_URI and RABBITMQ_URI name (environment
 * variables or system properties), else a MongoDB (mongo-java-server) and an AMQP 0-9-1 broker (Qpid Broker-J)
 * embedded in this JVM, started once for the test run.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OrdersConvergeTest {

    @Test
    void the_orders_converge_with_2000_operations_30_percent_duplicates_and_a_consumer_killed(MongoBackend mongo,
                                                                                           RabbitBackend rabbit) {
        ChaosResult result = OrdersChaos.ordersUnderChaos(mongo.connectionString(), rabbit.uri());

        assertThat(result.operations()).isEqualTo(2000);
        assertThat(result.messages()).as("30%% duplicates").isGreaterThan(2400);
        assertThat(result.faults()).containsExactly("consumer killed");
        assertThat(result.viewDiverged()).as("the skus view").contains(0L);
        assertThat(result.converged()).as("diverged %s, lost %d, dead-lettered %d", result.divergedIds(),
                result.lost(), result.deadLettered()).isTrue();
    }
}
// end::plain-junit[]
