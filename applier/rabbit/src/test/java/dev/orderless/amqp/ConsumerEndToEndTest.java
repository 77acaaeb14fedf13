package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.broker.QueueTopology;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/** 3,000 operations over 200 entities, shuffled, 20% duplicated, 4 competing consumers: converged. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsumerEndToEndTest {

    @Test
    void shuffled_and_duplicated_messages_through_four_consumers_converge_to_the_oracle(ConnectionFactory cf,
                                                                                        MongoDatabase db) throws Exception {
        run(cf, db, 1);
    }

    @Test
    void the_same_in_batches_of_fifty_converges_and_acks_every_message_once(ConnectionFactory cf, MongoDatabase db)
            throws Exception {
        run(cf, db, 50);
    }

    static void run(ConnectionFactory cf, MongoDatabase db, int batch) throws Exception {
        long seed = Long.getLong("orderless.seed", System.nanoTime());
        Random random = new Random(seed);
        // every kind of operation, counters' increments among them (envelope version 2)
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(random, 3000, 3000, 200), "s");
        List<Operation> delivered = Histories.delivery(history, 0.2, random);

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "e2e", Histories.ALL_TYPES)) {
            fixture.start(batch > 1 ? fixture.options(4).withBatch(batch, Duration.ofMillis(20)) : fixture.options(4).perMessage());
            fixture.publish(delivered);
            fixture.awaitHandled(delivered.size(), Duration.ofMinutes(3));

            System.out.printf("[e2e] seed %d: %d ops over 200 entities, %d messages (shuffled, %d duplicates),"
                            + " 4 consumers" + (batch > 1 ? " in batches of " + batch : "") + " on %s queue: applied %.0f, superseded %.0f, duplicate %.0f, dead-lettered %.0f%n",
                    seed, history.size(), delivered.size(), delivered.size() - history.size(),
                    fixture.topology.type() == QueueTopology.QueueType.QUORUM ? "a quorum" : "a classic",
                    fixture.count("orderless.consume.outcomes", "outcome", Outcome.APPLIED.tag()),
                    fixture.count("orderless.consume.outcomes", "outcome", Outcome.SUPERSEDED.tag()),
                    fixture.count("orderless.consume.outcomes", "outcome", Outcome.DUPLICATE.tag()),
                    fixture.deadLettered());
            assertThat(fixture.acked()).as("every message acked once (seed " + seed + ")").isEqualTo(delivered.size());
            assertThat(fixture.deadLettered()).isZero();
            fixture.awaitEmpty(fixture.queue);
            fixture.awaitEmpty(fixture.deadLetterQueue);
            fixture.assertConverged(history);
        }
    }
}
