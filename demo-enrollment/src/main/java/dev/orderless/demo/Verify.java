package dev.orderless.demo;

import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import dev.orderless.broker.QueueTopology;
import org.springframework.amqp.core.QueueInformation;

/**
 * {@code verify}: checks a run made of several processes without dropping anything.
 *
 * <ol>
 *   <li>Reads every action {@code publish} (or {@code run}) recorded in the {@link Journal} and replays
 *       them in seq order: the sequential oracle.
 *   <li>Compares each stored student with it: diverged students, and lost effects (what the oracle's
 *       state shows of an action and MongoDB does not, {@link ReferenceModel#missingEffects}).
 *   <li>Runs a roster feeder under the view's lease (standing by while a {@code view} process feeds it)
 *       until the rosters equal those derived from the students, or {@code --wait} runs out.
 *   <li>Prints what the queues still hold and the consumers' tallies, then the same {@code RESULT} line
 *       as {@code run}; exit 0 only if converged, nothing lost and the rosters consistent. Effects missing while
 *       messages wait in the work queue are "still queued" ({@code queued=N}, N in the queue), not lost: those
 *       messages can still bring them.
 * </ol>
 */
final class Verify {
    private final Wiring w;
    private final DemoOptions o;
    private final PrintStream out;

    Verify(Wiring wiring, PrintStream out) {
        this.w = wiring;
        this.o = wiring.options;
        this.out = out;
    }

    int verify() throws InterruptedException {
        out.println(w.describe());
        List<Operation> ops = w.journal.publishedOps();
        Journal.Totals published = w.journal.totals();
        if (ops.isEmpty()) {
            out.println("verify: nothing was published into database '" + o.database()
                    + "' (no recorded actions): run 'publish' first");
            return 1;
        }
        QueueInformation work = queue(o.queue());
        long waiting = work.getMessageCount();
        long deadLetters = queue(o.deadLetterQueue()).getMessageCount();
        out.printf("  %-15s %,d actions recorded, %,d messages of which %,d poison%n", "published", ops.size(),
                published.messages(), published.poison());
        out.printf("  %-15s %,d messages still in '%s'%s, %,d in '%s'%s%n", "queues", waiting, o.queue(),
                work.getConsumerCount() > 0 ? " (" + work.getConsumerCount() + " consumers on it, holding more unacked)" : "",
                deadLetters, o.deadLetterQueue(), waiting > 0 || work.getConsumerCount() > 0
                        ? " (consumers have not finished: expect divergence)" : "");

        Map<String, EntityState> expected = new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops);
        Map<String, EntityState> stored = EntityState.readAll(w.students.find(), Enrollment.STUDENT_SCHEMA);
        long diverged = ReferenceModel.diverged(expected, stored).size();
        long lost = ReferenceModel.missingEffects(expected, stored);
        // missing effects are not lost while messages wait in the queue: those can still bring them
        boolean queued = waiting > 0 && lost > 0;
        out.printf("  %-15s %,d students compared with the sequential oracle: %,d diverged, %,d %s%n",
                "converged", expected.size(), diverged, lost, queued ? "effects missing, still queued (" + waiting
                        + " in the queue): not lost yet; let the consumers finish, then verify again"
                        : lost > 0 && work.getConsumerCount() > 0 ? "lost effects, unless the " + work.getConsumerCount()
                        + " consumers still on the queue hold them" : "lost effects");

        Duration caughtUp = rostersCaughtUp();
        boolean consistent = !caughtUp.isNegative();
        out.printf("  %-15s %s%n", "view", consistent
                ? String.format("the rosters matched the students after %.2f s", caughtUp.toMillis() / 1000.0)
                : "the rosters still differ from the students after " + o.waitSeconds() + " s");

        Journal.Totals.Tally tally = w.journal.tallied();
        out.printf("  %-15s %,d processes counted %,d applied, %,d stale, %,d dead-lettered%n", "consumers",
                tally.processes(), tally.applied(), tally.stale(), tally.deadLettered());
        return Result.compared(expected, stored, published.messages() - published.poison(), tally.applied(),
                tally.stale(), tally.deadLettered(), lost, consistent).stillQueued(queued ? waiting : 0)
                .print(out);
    }

    /** How long the rosters took to match the students, or a negative duration if they did not in time. */
    private Duration rostersCaughtUp() throws InterruptedException {
        long started = System.nanoTime();
        long deadline = started + Duration.ofSeconds(o.waitSeconds()).toNanos();
        try (ViewFeeder feeder = w.startRosterFeeder(new SimpleMeterRegistry())) {
            while (true) {
                if (Rosters.inView(w.rosters).equals(Rosters.fromStudents(w.students))) {
                    return Duration.ofNanos(System.nanoTime() - started);
                }
                if (System.nanoTime() > deadline || feeder.state() == ViewFeeder.State.FAILED) {
                    feeder.failure().ifPresent(f -> out.println("  the roster feeder failed: " + f.getMessage()));
                    return Duration.ofNanos(-1);
                }
                Thread.sleep(200);
            }
        }
    }

    /** The queue's ready messages and consumers; none of either if it does not exist. */
    private QueueInformation queue(String queue) {
        return QueueTopology.lookup(w.rabbit(), queue).orElseGet(() -> new QueueInformation(queue, 0, 0));
    }
}
