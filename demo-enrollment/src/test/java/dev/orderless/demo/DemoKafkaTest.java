package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo on Kafka, as a user runs it: no URI, so an embedded MongoDB and an embedded KRaft broker. Tagged
 * {@code kafka}: outside the test command, in {@code mvn -B -pl demo-enrollment test -Pkafka}, which prints the
 * RESULT line and the [chaos] table to CI's log.
 */
@Tag("kafka")
class DemoKafkaTest {

    @Test
    void a_shuffled_duplicated_poisoned_run_on_a_share_group_ends_converged_with_the_poison_in_the_dead_letter_topic() {
        CliRun run = CliRun.of(Map.of(), "run", "--broker", "kafka", "--ops", "3000", "--students", "80", "--classes",
                "8", "--consumers", "4", "--shuffle", "--duplicate-rate", "0.2", "--poison", "9", "--seed", "11");

        System.out.println(run.out());
        assertThat(run.result()).contains("converged=true", "diverged=0", "dead_lettered=9", "lost=0", "queued=0",
                "rosters_consistent=true", "credits_diverged=0", "status_diverged=0");
        assertThat(run.out()).as("the dead-letter topic, read back").containsPattern("'enrollment\\.ops\\.\\w+\\.dlt'"
                + " holds 9 records");
        assertThat(run.exit()).as(run.err()).isZero();
    }

    @Test
    void chaos_on_a_share_group_converges_with_a_consumer_killed_the_broker_restarted_and_mongodb_cut(
            @TempDir Path dir) {
        Path exported = dir.resolve("students.jsonl");
        CliRun run = CliRun.of(Map.of(), "run", "--broker", "kafka", "--ops", "800", "--students", "30", "--classes",
                "6", "--shuffle", "--history", "--export-history", exported.toString());
        assertThat(run.out()).contains("exported 800 recorded actions to " + exported);

        CliRun chaos = CliRun.of(Map.of(), "chaos", "--broker", "kafka", "--history", exported.toString(), "--seed",
                "5", "--faults", "KILL_CONSUMER,CUT_BROKER,CUT_MONGO");

        System.out.println(chaos.out());
        assertThat(chaos.out()).containsPattern("\\[chaos\\] students.jsonl +800 +\\d+ +consumer killed, broker"
                + " restarted, MongoDB cut 2s +0 +0 +0 ");
        assertThat(chaos.exit()).as(chaos.err()).isZero();
    }
}
