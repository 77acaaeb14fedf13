package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/** Stopping consumers mid-run: what was in flight finishes or goes back; a new consumer finishes the rest. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class GracefulShutdownTest {

    @Test
    void a_consumer_stopped_mid_run_leaves_every_message_applied_or_queued(ConnectionFactory cf, MongoDatabase db)
            throws Exception {
        long seed = Long.getLong("orderless.seed", System.nanoTime());
        Random random = new Random(seed);
        List<Operation> history = Histories.operations(Histories.steps(random, 3000, 3000, 100), "g");
        List<Operation> delivered = Histories.delivery(history, 0.2, random);

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "shutdown")) {
            OperationConsumer first = fixture.start(fixture.options(4));
            fixture.publish(delivered);
            Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> fixture.acked() >= 500);

            first.close();
            double ackedByFirst = fixture.acked();
            // the broker requeues what was unacked when the channels close; a quorum queue does so asynchronously
            Awaitility.await("acked + queued = published: nothing lost or half-done").atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(ackedByFirst + fixture.messagesIn(fixture.queue))
                            .as("%.0f acked + %d queued", ackedByFirst, fixture.messagesIn(fixture.queue))
                            .isEqualTo(delivered.size()));
            assertThat(fixture.acked()).as("nothing acked after close").isEqualTo(ackedByFirst);
            System.out.printf("[shutdown] seed %d: %d messages; stopped after %.0f acked, %d back in the queue%n",
                    seed, delivered.size(), ackedByFirst, fixture.messagesIn(fixture.queue));

            fixture.start(fixture.options(4));
            fixture.awaitHandled(delivered.size(), Duration.ofMinutes(2));
            fixture.awaitEmpty(fixture.queue);
            fixture.assertConverged(history);
        }
    }
}
