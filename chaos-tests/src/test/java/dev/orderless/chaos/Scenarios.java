package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.Awaitility;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Runs chaos scenarios and keeps their summary table, one per test class (one per broker). Every scenario
 * ends with the same checks: diverged 0 (students equal the oracle), lost 0 (nothing left unhandled), every
 * student's credits (a counter) the oracle's sum (the table's counters line: students diverged, credits off),
 * every poison message dead-lettered and nothing else, and the rosters view equal to the rosters of the final
 * students (in {@link ChaosRig#verify}). A seed reproduces a run ({@code -Dorderless.seed=...}); a failure
 * names it.
 */
final class Scenarios {
    static final int OPS = 1500;

    /** A scenario's faults; returns what it injected, for the summary. */
    interface Body {
        String run(ChaosRig rig, List<Operation> ops) throws Exception;
    }

    /** Checks after the verdict, for a scenario that has more to prove; returns what it adds to the summary. */
    interface After {
        String check(ChaosRig rig, ChaosRig.Verdict verdict) throws Exception;
    }

    private final String title;
    private final long seed = Long.getLong("orderless.seed", System.nanoTime());
    private final List<String> summary = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong totalOps = new AtomicLong();
    private final AtomicLong increments = new AtomicLong();
    private final AtomicLong creditsDiverged = new AtomicLong();
    private final AtomicLong creditsOff = new AtomicLong();

    Scenarios(String title) {
        this.title = title;
    }

    void run(String name, int index, MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db, Body body) {
        run(name, index, m, r, cf, db, body, (rig, verdict) -> "");
    }

    void run(String name, int index, MongoBackend m, RabbitBackend r, ConnectionFactory cf, MongoDatabase db, Body body,
             After after) {
        run(name, index, () -> new ChaosRig(m, r, cf, db, seed + index), body, after);
    }

    /** As {@link #run(String, int, MongoBackend, RabbitBackend, ConnectionFactory, MongoDatabase, Body)}, on a rig of the caller's. */
    void run(String name, int index, RigFactory rigs, Body body, After after) {
        long started = System.nanoTime();
        try (ChaosRig rig = rigs.create()) {
            List<Operation> ops = rig.workload(OPS, 150);
            String faults = body.run(rig, ops);
            rig.drain();
            ChaosRig.Verdict v = rig.verify(ops);
            String more = v.diverged() == 0 && v.lost() == 0 ? after.check(rig, v) : "";
            double seconds = (System.nanoTime() - started) / 1e9;
            summary.add(String.format("%-26s %6d %8d  %-54s %8d %5d %6d of %-4d %6.1fs%s", name, ops.size(), v.published(),
                    faults + more, v.diverged(), v.lost(), v.deadLettered(), v.poison(), seconds,
                    v.deadLetteredTwice() == 0 ? "" : " (" + v.deadLetteredTwice() + " dead-lettered again after a kill)"));
            totalOps.addAndGet(ops.size());
            increments.addAndGet(v.increments());
            creditsDiverged.addAndGet(v.creditsDiverged());
            creditsOff.addAndGet(v.creditsOff());
            assertThat(v.creditsDiverged()).as("students whose credits differ from the oracle's sum").isZero();
            assertThat(v.diverged()).as("diverged").isZero();
            assertThat(v.lost()).as("lost").isZero();
            assertThat(v.deadLettered()).as("distinct poison messages dead-lettered = poison injected").isEqualTo(v.poison());
        } catch (Throwable e) {
            summary.add(String.format("%-28s FAILED: %s", name, e.getMessage() == null ? e
                    : e.getMessage().lines().findFirst().orElse("")));
            throw new AssertionError("chaos scenario '" + name + "' failed; replay it with -Dorderless.seed=" + seed, e);
        }
    }

    /** Makes the rig of one scenario. */
    interface RigFactory {
        ChaosRig create() throws Exception;
    }

    void skipped(String name, String why) {
        summary.add(String.format("%-26s skipped: %s", name, why));
    }

    long totalOps() {
        return totalOps.get();
    }

    void print() {
        System.out.println();
        System.out.println("[chaos] " + title);
        System.out.printf("[chaos] %-26s %6s %8s  %-54s %8s %5s %13s %7s%n", "scenario", "ops", "messages",
                "faults injected", "diverged", "lost", "dead-lettered", "time");
        summary.forEach(row -> System.out.println("[chaos] " + row));
        System.out.printf("[chaos] %-26s %6d %8s  %-54s %8d %5d%n", "counters (credits)", increments.get(), "",
                "increments among the ops, summed under every fault above", creditsDiverged.get(), creditsOff.get());
        System.out.printf("[chaos] %d ops across %d scenarios, seed %d%n", totalOps.get(), summary.size(), seed);
    }

    static void standardConsumersAndFeeders(ChaosRig rig) {
        rig.startConsumer(2);
        rig.startConsumer(2);
        rig.startFeeder("feeder-a");
        rig.startFeeder("feeder-b");
    }

    /** Waits (bounded) until {@code share} of the messages were handled. */
    static void progress(ChaosRig rig, int messages, double share) {
        Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(50))
                .until(() -> rig.handled() >= messages * share);
    }

    /** How long a fault lasts: the fault's duration, not a wait for anything. */
    static void hold(Duration duration) {
        LockSupport.parkNanos(duration.toNanos());
    }
}
