package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * The console's ingestion (dead-letter queue into MongoDB, a batch acknowledged once stored) across a crash: a console
 * application in a process of its own, SIGKILLed once the store holds some but not all of 10,000 letters (decided by
 * the store's count, polled), then started again. Every letter is stored exactly once and the queue is left empty.
 * About 20 s (two Spring Boot starts, 10,000 letters published and ingested): in CI's second invocation (-Pfailover),
 * beside {@link ConsoleLettersBenchmark}, which prints the same run's figures; the test run's 10 minutes have no room.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@org.junit.jupiter.api.Tag("failover")
class ConsoleIngestionKillTest {
    private static final int LETTERS = 10_000;

    @Test
    void a_console_killed_mid_ingestion_and_started_again_stores_every_letter_once_and_empties_the_queue(
            MongoBackend mongo, RabbitBackend broker, ConnectionFactory rabbit) throws Exception {
        try (LetterFlood flood = new LetterFlood("kill", rabbit, broker.uri(), mongo)) {
            flood.publish(LETTERS);

            LetterFlood.Killed killed = flood.killedMidIngestion(0.3);
            System.out.println("[console-kill] " + LETTERS + " letters; SIGKILLed with " + killed.storedAtKill()
                    + " stored; after the restart " + killed.verdict() + ", left in the queue " + killed.queueAfter());

            assertThat(killed.storedAtKill()).as("the kill came mid-ingestion: some letters stored, not all")
                    .isPositive().isLessThan(LETTERS);
            assertThat(killed.verdict()).isEqualTo(new LetterFlood.Verdict(LETTERS, LETTERS, 0, 0, 0));
            assertThat(killed.queueAfter()).as("letters left in '" + flood.deadLetterQueue + "'").isZero();
        }
    }
}
