package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.kafka.ShareGroupConsumer;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.kafka.KafkaProcess;
import dev.orderless.testing.kafka.KafkaSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The chaos suite's scenarios on a Kafka share group: the RabbitMQ suite's histories (the simulated web
 * application's operations, stamped per student, shuffled, some produced twice, poison among them) consumed by
 * {@link ShareGroupConsumer}s from a topic of 4 partitions on a real broker (KRaft, a child process, so that it can be
 * SIGKILLed), into the embedded MongoDB, while a fault hits: a consumer process SIGKILLed mid-poll, the broker
 * SIGKILLed and started again, MongoDB cut for longer than the acquisition lock. Every scenario ends with the same
 * checks against the oracle ({@link dev.orderless.oracle.ReferenceModel}): diverged 0 (the students equal it), lost 0
 * (no effect it shows missing, no record the share group left unsettled), and the dead-letter topic holding the poison
 * records and nothing else; its line in the log reads {@code [kafka] <scenario> seed=<seed> messages=<n> diverged=0
 * lost=0 dead_letters=<n> (expected <poison>) letters_written=<n>}: dead_letters counts distinct poison records.
 * {@code -Dorderless.seed=<seed>} replays a run.
 *
 * <p>About a minute and a half on a 2-core machine: in CI's second invocation (-Pfailover), not the test run.
 */
@ExtendWith(MongoExtension.class)
@Tag("failover")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaShareGroupChaosTest {
    private static final int OPS = Scenarios.OPS;
    private static final int STUDENTS = 150;
    private static final long SEED = Long.getLong("orderless.seed", System.nanoTime());
    /** A 2 s acquisition lock, 5 deliveries: a killed consumer's records come back in seconds. */
    private static final KafkaSettings SETTINGS = KafkaSettings.ofDefaults();
    private static final AtomicInteger TOTAL = new AtomicInteger();

    private static KafkaProcess broker;

    @BeforeAll
    static void startBroker() {
        broker = KafkaProcess.start(SETTINGS);
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
        System.out.printf("[kafka] %d ops across the share group's chaos scenarios, seed %d%n", TOTAL.get(), SEED);
    }

    @Test
    @Order(1)
    void shuffled_histories_with_duplicates_and_poison_on_four_consumers_converge(MongoBackend m, MongoDatabase db) {
        run("shuffled-duplicates", 1, m, db, (rig, ops) -> {
            rig.startConsumer(4);
            int records = rig.publish(ops, true, 0.3, 20);
            return (records - ops.size() - 20) + " duplicates, 20 poison, shuffled, 4 consumers on 4 partitions";
        }, (rig, verdict) -> assertThat(rig.deadLetteredByMeters()).as("dead letters by the consumers' meters")
                .isEqualTo(verdict.poison()));
    }

    @Test
    @Order(2)
    void a_consumer_process_killed_mid_poll_has_its_records_redelivered_after_the_acquisition_lock(MongoBackend m,
            MongoDatabase db) {
        run("consumer-process-killed", 2, m, db, (rig, ops) -> {
            int records = rig.publish(ops, true, 0.2, 10);
            Path log = Files.createDirectories(Path.of("target", "kafka-chaos")).resolve("consumer-" + rig.group + ".log");
            long applied;
            try (KafkaConsumerProcess victim = rig.startConsumerProcess(2, log)) {
                // killed by progress: once MongoDB holds some of its writes, while it holds polls of the backlog
                Awaitility.await("the consumer process applies").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(20)).until(() -> rig.students.countDocuments() >= 40);
                victim.kill();
                applied = rig.students.countDocuments();
            }
            long unsettled = rig.unsettled();
            assertThat(unsettled).as("records unsettled when the consumer process was killed").isPositive();
            // what the victim acquired stays locked to it until the lock times out; these take it over then
            rig.startConsumer(4);
            return "a 2-consumer process SIGKILLed with " + applied + " students written, " + unsettled + " of "
                    + records + " records unsettled";
        }, (rig, verdict) -> { });
    }

    @Test
    @Order(3)
    void the_broker_killed_and_started_again_mid_run_loses_nothing(MongoBackend m, MongoDatabase db) {
        run("broker-killed", 3, m, db, (rig, ops) -> {
            int records = rig.publish(ops, true, 0.2, 10);
            ShareGroupConsumer consumer = rig.startConsumer(4);
            rig.progress(records, 0.3);
            double at = rig.handled();
            broker.kill();   // SIGKILL: in-flight acknowledgements and the share-group state's last writes cut off
            broker.startAgain();
            rig.progress(records, Math.min(1.0, at / records + 0.2));
            assertThat(consumer.isRunning()).as("the consumer runs on after the broker came back").isTrue();
            return "broker SIGKILLed at " + Math.round(100 * at / records) + "% handled, started again";
        }, (rig, verdict) -> { });
    }

    @Test
    @Order(4)
    void mongodb_cut_for_longer_than_every_delivery_holds_the_records_and_converges_once_back(MongoBackend m,
            MongoDatabase db) {
        run("mongodb-cut", 4, m, db, (rig, ops) -> {
            int records = rig.publish(ops, true, 0.1, 10);
            ShareGroupConsumer consumer = rig.startConsumer(4);
            rig.progress(records, 0.3);
            // longer than every delivery's lock together: a record whose lock were not renewed would be offered
            // again until the broker archived it (lost) or the consumer dead-lettered it on its last delivery
            Duration cut = SETTINGS.recordLockDuration().multipliedBy(SETTINGS.deliveryCountLimit() + 1L);
            rig.mongoProxy.cut();
            Awaitility.await("the consumer says it waits for MongoDB").atMost(Duration.ofSeconds(30))
                    .until(() -> consumer.waitingFor().isPresent());
            String waiting = consumer.waitingFor().orElse("");
            Scenarios.hold(cut);
            int held = consumer.retrying();
            assertThat(consumer.isRunning()).as("the consumer runs through the outage").isTrue();
            rig.mongoProxy.restore();
            Awaitility.await("the consumer is back").atMost(Duration.ofSeconds(30))
                    .until(() -> consumer.waitingFor().isEmpty());
            return "MongoDB cut " + cut.toSeconds() + " s at 30%, " + held + " records held (" + waiting + ")";
        }, (rig, verdict) -> {
            assertThat(verdict.deadLetters()).as("dead letters: the poison, nothing held too long").isEqualTo(verdict.poison());
            assertThat(rig.deadLetteredByMeters()).as("dead letters by the consumers' meters").isEqualTo(verdict.poison());
        });
    }

    /** A scenario's faults; returns what it injected, for the log. */
    interface Body {
        String run(KafkaChaosRig rig, List<Operation> ops) throws Exception;
    }

    /** Checks of a scenario beyond the common ones, once it converged. */
    interface After {
        void check(KafkaChaosRig rig, KafkaChaosRig.Verdict verdict) throws Exception;
    }

    private static void run(String name, int index, MongoBackend m, MongoDatabase db, Body body, After after) {
        long started = System.nanoTime();
        try (KafkaChaosRig rig = new KafkaChaosRig(broker.bootstrapServers(), m, db, SEED + index)) {
            List<Operation> ops = rig.workload(OPS, STUDENTS);
            String faults = body.run(rig, ops);
            rig.drain();
            KafkaChaosRig.Verdict v = rig.verify(ops);
            TOTAL.addAndGet(ops.size());
            System.out.printf("[kafka] %s: %d ops; %s; %.0f deliveries handled in this JVM; %.1f s%s%n", name,
                    ops.size(), faults, rig.handled(),
                    (System.nanoTime() - started) / 1e9, v.deadLetters() == v.distinctPoison() ? ""
                            : "; " + (v.deadLetters() - v.distinctPoison()) + " poison records dead-lettered more than once");
            // dead_letters: the distinct poison records in the dead-letter topic; a kill between a letter and its REJECT
            // writes one twice (letters_written says so), which a replay absorbs as a duplicate
            System.out.printf("[kafka] %s seed=%d messages=%d diverged=%d lost=%d dead_letters=%d (expected %d)"
                    + " letters_written=%d%n", name, SEED, v.records(), v.diverged(), v.lost(), v.distinctPoison(),
                    v.poison(), v.deadLetters());
            assertThat(v.diverged()).as("students diverged from the oracle").isZero();
            assertThat(v.lost()).as("operations lost (effects missing, records unsettled)").isZero();
            assertThat(v.distinctPoison()).as("distinct poison records dead-lettered = poison produced")
                    .isEqualTo(v.poison());
            after.check(rig, v);
        } catch (Throwable e) {
            throw new AssertionError("Kafka chaos scenario '" + name + "' failed; replay it with -Dorderless.seed="
                    + SEED, e);
        }
    }
}
