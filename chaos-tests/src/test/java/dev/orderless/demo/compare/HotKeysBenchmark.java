package dev.orderless.demo.compare;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.demo.Enrollment;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * Issue 41's measure of one consumer's MongoDB commands per batch, by kind: the compare workload's actions (Zipf
 * over 100,000 students, s = 1.1; and uniform over 10,000), applied single-threaded in publish order by
 * {@link GuardedApplier#applyAll} in batches of 50, with no broker and no other consumer. A bulk write is an
 * {@code update} command of more than one statement, a single update one of one, a read a {@code find}. Prints
 * one {@code HOTKEYS} line (commands per batch, messages per command); exits 0. Not part of the test run:
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=HotKeysBenchmark
 * </pre>
 */
class HotKeysBenchmark {
    private static final int MESSAGES = 20_000;
    private static final int BATCH = 50;

    @Test
    void run() {
        StringBuilder line = new StringBuilder("HOTKEYS batch=" + BATCH);
        try (MongoBackend mongo = Backends.mongo()) {
            for (CompareWorkload workload : List.of(new CompareWorkload(Keys.zipf(100_000, 1.1), MESSAGES, 7),
                    new CompareWorkload(Keys.uniform(10_000), MESSAGES, 7))) {
                Counts counts = new Counts();
                try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(mongo.connectionString()))
                        .addCommandListener(counts).build())) {
                    MongoCollection<BsonDocument> students = client.getDatabase(
                            MongoBackend.freshDatabaseName("hotkeys")).getCollection("students", BsonDocument.class);
                    GuardedApplier applier = GuardedApplier.create(students, Enrollment.STUDENT_SCHEMA);
                    List<Operation> ops = workload.ops();
                    long failed = 0;
                    counts.reset();   // the applier's start-up checks are not the batches'
                    for (int from = 0; from < ops.size(); from += BATCH) {
                        for (BatchResult result : applier.applyAll(ops.subList(from, Math.min(ops.size(), from + BATCH)))) {
                            failed += result instanceof BatchResult.Done ? 0 : 1;
                        }
                    }
                    double batches = Math.ceil(ops.size() / (double) BATCH);
                    long commands = counts.bulk.get() + counts.single.get() + counts.finds.get() + counts.other.get();
                    String keys = workload.keys().name();
                    System.out.printf(Locale.ROOT, "[hotkeys] %-7s per batch of %d: %.2f bulk writes, %.2f single updates,"
                                    + " %.2f finds, %.2f other; %.1f messages per command; %d not done%n", keys, BATCH,
                            counts.bulk.get() / batches, counts.single.get() / batches, counts.finds.get() / batches,
                            counts.other.get() / batches, ops.size() / (double) commands, failed);
                    line.append(String.format(Locale.ROOT, " %s_bulk_per_batch=%.2f %s_single_per_batch=%.2f"
                                    + " %s_finds_per_batch=%.2f %s_msgs_per_command=%.1f", keys,
                            counts.bulk.get() / batches, keys, counts.single.get() / batches, keys,
                            counts.finds.get() / batches, keys, ops.size() / (double) commands));
                }
            }
        }
        System.out.println(line);
    }

    /** Commands by kind. */
    private static final class Counts implements CommandListener {
        final AtomicLong bulk = new AtomicLong();
        final AtomicLong single = new AtomicLong();
        final AtomicLong finds = new AtomicLong();
        final AtomicLong other = new AtomicLong();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            switch (event.getCommandName()) {
                case "update" -> {
                    int statements = event.getCommand().containsKey("updates")
                            ? event.getCommand().getArray("updates").size() : 1;
                    (statements > 1 ? bulk : single).incrementAndGet();
                }
                case "find" -> finds.incrementAndGet();
                default -> other.incrementAndGet();
            }
        }

        void reset() {
            bulk.set(0);
            single.set(0);
            finds.set(0);
            other.set(0);
        }
    }
}
