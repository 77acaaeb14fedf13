package dev.orderless.chaos;

import static dev.orderless.chaos.Scenarios.progress;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.OnRabbitMq4;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * The chaos scenarios on RabbitMQ 4.0 (CONTRIBUTING.md says why these): those that involve the broker (consumers
 * killed, connections cut, poison, a resource alarm), which {@link ChaosSuiteTest} runs on 3.x as well; the AMQP
 * 1.0 consumer's, killed with poison about; and five about MongoDB and the view, which run here instead of on
 * 3.x wherever a RabbitMQ 4 is. It runs beside the classes on RabbitMQ 3.x ({@link Execution} concurrent; they
 * share no broker and no queue), its scenarios one after another.
 */
@OnRabbitMq4
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock("rabbitmq-4")   // a lock on the class runs its scenarios in one thread, one at a time
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChaosOnRabbitMq4Test {
    private static final Scenarios SCENARIOS = new Scenarios("on RabbitMQ 4 (RABBITMQ4_URI), over AMQP 0-9-1");

    @AfterAll
    static void summary() {
        SCENARIOS.print();
    }

    @Test
    @Order(1)
    void consumers_killed_mid_flight(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        SCENARIOS.run("consumers killed", 3, m, r, cf, db, ChaosSuiteTest::consumersKilled);
    }

    @Test
    @Order(2)
    void rabbitmq_connection_cut_and_restored(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        SCENARIOS.run("RabbitMQ connection cut", 5, m, r, cf, db, ChaosSuiteTest::rabbitMqCut);
    }

    @Test
    @Order(3)
    void poison_messages(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        SCENARIOS.run("poison", 8, m, r, cf, db, ChaosSuiteTest::poison);
    }

    @Test
    @Order(4)
    void broker_resource_alarm(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        Optional<String> unavailable = DiskAlarm.unavailable(r);
        unavailable.ifPresent(why -> SCENARIOS.skipped("broker resource alarm", why));
        assumeTrue(unavailable.isEmpty(), () -> unavailable.orElse(""));
        SCENARIOS.run("broker resource alarm", 10, m, r, cf, db, ChaosSuiteTest::resourceAlarm);
    }

    /**
     * The AMQP 1.0 path: its consumers killed mid-drain (connections cut, then closed), poison among the
     * messages. The broker dead-letters each poison message when a consumer settles it so, in one step, so
     * however the kills fall, each is in the dead-letter queue exactly once, counting copies.
     */
    @Test
    @Order(5)
    void amqp_1_0_consumers_killed_mid_flight(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        SCENARIOS.run("AMQP 1.0 consumers killed", 14, m, r, cf, db, ChaosOnRabbitMq4Test::amqp10ConsumersKilled,
                (rig, verdict) -> {
                    assertThat(verdict.deadLetteredTwice()).as("poison dead-lettered more than once").isZero();
                    return ", each dead-lettered once";
                });
    }

    // five scenarios about MongoDB and the view run here where RabbitMQ 4 is, beside the broker's on 3.x (the budget)

    @Test
    @Order(6)
    void shuffled_order(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        ChaosSuiteTest.shuffledOrder(SCENARIOS, m, r, cf, db);
    }

    @Test
    @Order(7)
    void duplicates(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        ChaosSuiteTest.duplicates(SCENARIOS, m, r, cf, db);
    }

    @Test
    @Order(8)
    void mongodb_connection_cut_and_restored(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        ChaosSuiteTest.mongoDbCut(SCENARIOS, m, r, cf, db);
    }

    @Test
    @Order(9)
    void view_feeder_paused_past_its_lease(MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db) {
        ChaosSuiteTest.feederPausedPastLease(SCENARIOS, m, r, cf, db);
    }

    @Test
    @Order(11)
    void feeders_in_four_segments_over_two_processes(MongoBackend m, RabbitBackend r, ConnectionFactory cf,
                                                     MongoDatabase db) {
        ChaosSuiteTest.fourSegmentsTwoFeeders(SCENARIOS, m, r, cf, db);
    }

    @Test
    @Order(13)
    void its_share_covered_at_least_7500_operations() {
        assertThat(SCENARIOS.totalOps()).isGreaterThanOrEqualTo(7_500);
    }

    static String amqp10ConsumersKilled(ChaosRig rig, List<Operation> ops) {
        rig.startAmqp10Consumer(2);
        rig.startAmqp10Consumer(2);
        rig.startFeeder("feeder-a");
        rig.startFeeder("feeder-b");
        int messages = rig.publish(ops, true, 0.2, 60);
        for (double at : new double[] {0.25, 0.6}) {
            progress(rig, messages, at);
            rig.kill(rig.consumers.get(0));
            rig.startAmqp10Consumer(2);
        }
        return "2 AMQP 1.0 consumers killed abruptly, 60 poison";
    }
}
