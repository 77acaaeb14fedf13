package dev.orderless.chaos;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.demo.ClassRosterProjection;
import dev.orderless.demo.Enrollment;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The view feeder in steady state: every student is in four classes and out of a fifth, the feeder has
 * caught up, then each round renames every student once (one change event each, five roster ops each:
 * four elements already in their rosters, one already in the tombstones). Measured: events per second
 * from the first rename to the last roster write of the round, and the commands the feeder's client sent
 * per event (change stream, view writes and reads, lease, position commits; counted by the driver's
 * command listener). The source is written through a client of its own, outside the count.
 */
final class ViewBatchBenchmark {
    private static final int CLASSES = 30;
    private static final int OPS_PER_EVENT = 5;

    /** What one run measured. */
    record Run(double eventsPerSecond, double roundTripsPerEvent) {
    }

    private ViewBatchBenchmark() {
    }

    /**
     * @param sourceDb  the database as the writers of the source reach it
     * @param feederDb  the same database as the feeder reaches it (through the latency under test)
     * @param commands  counts the commands of {@code feederDb}'s client
     */
    static Run measure(MongoDatabase sourceDb, MongoDatabase feederDb, LongAdder commands, FeederOptions.Writes writes,
                       int students, int rounds) {
        return measure(sourceDb, List.of(feederDb), commands, writes, 1, students, rounds);
    }

    /**
     * The same with the view split into {@code segments}, fed by one feeder per database of
     * {@code processes} (each its own client: a process), every feeder able to run every segment.
     */
    static Run measure(MongoDatabase sourceDb, List<MongoDatabase> processes, LongAdder commands,
                       FeederOptions.Writes writes, int segments, int students, int rounds) {
        String run = "v" + System.nanoTime();
        GuardedApplier sourceWrites = GuardedApplier.create(sourceDb.getCollection(run + "_students", BsonDocument.class),
                Enrollment.STUDENT_SCHEMA);
        List<Operation> setup = new ArrayList<>();
        for (int i = 0; i < students; i++) {
            String id = "s" + i;
            for (int k = 0; k < 5; k++) {
                setup.add(Operation.add(id, 1 + k, Enrollment.CLASSES, "C" + ((i + k) % CLASSES)));
            }
            setup.add(Operation.remove(id, 6, Enrollment.CLASSES, "C" + ((i + 4) % CLASSES)));
            setup.add(Operation.assign(id, 7, Enrollment.NAME, new BsonString("R0")));
        }
        applyAll(sourceWrites, setup);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        double seconds = 0;
        long sent = 0;
        List<ViewFeeder> feeders = new ArrayList<>();
        try {
            for (MongoDatabase process : processes) {
                feeders.add(ViewFeeder.builder(process, run + "_students", GuardedApplier.create(process.getCollection(
                                        run + "_rosters", BsonDocument.class), Enrollment.ROSTER_SCHEMA),
                                new ClassRosterProjection(), MongoLeaseProvider.create(process.getCollection(run + "_leases",
                                        BsonDocument.class), LeaseOptions.ofDefaults()))
                        .options(FeederOptions.ofDefaults("view:" + run).withWrites(writes).withSegments(segments))
                        .meters(meters).start());
            }
            awaitWrites(meters, (long) students * OPS_PER_EVENT);   // caught up
            int share = segments / processes.size();
            if (share >= 1) {   // the segments shared out before the clock starts: no hand-over mid-round
                Awaitility.await().atMost(Duration.ofMinutes(2)).until(() -> feeders.stream()
                        .allMatch(f -> f.fences().size() == share));
            }
            for (int round = 1; round <= rounds; round++) {
                List<Operation> renames = new ArrayList<>();
                for (int i = 0; i < students; i++) {
                    renames.add(Operation.assign("s" + i, 7 + round, Enrollment.NAME, new BsonString("R" + round)));
                }
                long before = commands.sum();
                long written = (long) writes(meters);
                long started = System.nanoTime();
                applyAll(sourceWrites, renames);
                awaitWrites(meters, written + (long) students * OPS_PER_EVENT);
                seconds += (System.nanoTime() - started) / 1e9;
                sent += commands.sum() - before;
            }
        } finally {
            feeders.forEach(ViewFeeder::close);
            for (String suffix : new String[] {"_students", "_rosters", "_leases", "_rosters_dead_letters"}) {
                sourceDb.getCollection(run + suffix).drop();
            }
        }
        double events = (double) students * rounds;
        return new Run(events / seconds, sent / events);
    }

    private static void awaitWrites(SimpleMeterRegistry meters, long atLeast) {
        Awaitility.await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(2))
                .until(() -> writes(meters) >= atLeast);
    }

    private static double writes(SimpleMeterRegistry meters) {
        return meters.find("orderless.view.writes").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private static void applyAll(GuardedApplier applier, List<Operation> ops) {
        for (int from = 0; from < ops.size(); from += 500) {
            for (BatchResult result : applier.applyAll(ops.subList(from, Math.min(ops.size(), from + 500)))) {
                if (!(result instanceof BatchResult.Done)) {
                    throw new IllegalStateException("source write not applied: " + result);
                }
            }
        }
    }
}
