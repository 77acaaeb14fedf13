package dev.orderless.chaos;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.MongoClientSettings;
import com.mongodb.ConnectionString;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.demo.Enrollment;
import dev.orderless.demo.compare.CpuMeter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;

/**
 * What the embedded MongoDB server (mongo-java-server, in this JVM) spends on orderless's guarded writes against
 * the plain upserts of compare's rivals, by the size of the document written, and what the client spends: the
 * profile behind the Zipf figures of {@code compare} (docs/compare.md, "Hot keys on this server").
 *
 * <p>One student's document holds {@code size} class entries (orderless: half live, half tombstones, as drops
 * leave them; plain: the live half, since a plain document keeps no tombstones); then the same mix of actions as
 * compare's (40 % enroll, 30 % drop, 30 % rename, over the same {@code size} classes, so the size holds) is
 * applied to it, one at a time and in batches of 50 (orderless's batched apply; the rivals' one ordered bulk
 * write). Server CPU: the embedded server's worker threads; client CPU: the applying thread's. Not part of the
 * test run (prints ratios, exits 0):
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=GuardCostBenchmark
 * </pre>
 */
class GuardCostBenchmark {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final UpdateOptions UPSERT = new UpdateOptions().upsert(true);
    private static final int BATCH = 50;

    /** What one way of writing cost per action. */
    record Cost(double serverMicros, double clientMicros, double statementsPerOp, double commandsPerOp) {
    }

    @Test
    void run() {
        try (EmbeddedMongo mongo = EmbeddedMongo.start()) {
            LongAdder commands = new LongAdder();
            LongAdder statements = new LongAdder();
            CommandListener counting = new CommandListener() {
                @Override
                public void commandStarted(CommandStartedEvent event) {
                    commands.increment();
                    BsonDocument command = event.getCommand();
                    statements.add(command.containsKey("updates") ? command.getArray("updates").size() : 1);
                }
            };
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(mongo.connectionString()))
                    .addCommandListener(counting).build())) {
                CpuMeter server = CpuMeter.ofNamed(name -> name.startsWith("embedded-mongo-worker"));
                Bench bench = new Bench(client, server, commands, statements);
                bench.measureAll(20, 2000);   // warm-up, not reported
                System.out.println("## Guarded writes against plain upserts, by document size (embedded MongoDB)");
                System.out.println();
                System.out.println("| class entries | way | server µs/action | client µs/action | statements/action"
                        + " | commands/action | server: guarded over plain |");
                System.out.println("|---|---|---|---|---|---|---|");
                StringBuilder line = new StringBuilder("GUARDCOST");
                // -Dorderless.guardcost.sizes=20 measures one size (to profile it alone)
                int[] sizes = java.util.Arrays.stream(System.getProperty("orderless.guardcost.sizes", "2,20,100,400").split(","))
                        .mapToInt(Integer::parseInt).toArray();
                for (int size : sizes) {
                    List<Cost> costs = bench.measureAll(size, 3000);
                    String[] ways = {"plain, one at a time", "guarded, one at a time", "plain, ordered bulk of 50",
                            "guarded, batch of 50"};
                    for (int w = 0; w < ways.length; w++) {
                        Cost c = costs.get(w);
                        Cost plain = costs.get(w < 2 ? 0 : 2);
                        System.out.printf(Locale.ROOT, "| %d | %s | %.1f | %.1f | %.2f | %.3f | %s |%n", size, ways[w],
                                c.serverMicros(), c.clientMicros(), c.statementsPerOp(), c.commandsPerOp(),
                                w % 2 == 0 ? "-" : String.format(Locale.ROOT, "%.2fx", c.serverMicros() / plain.serverMicros()));
                    }
                    line.append(String.format(Locale.ROOT, " server_batch_guarded_over_plain_%d=%.2f client_batch_guarded_over_plain_%d=%.2f",
                            size, costs.get(3).serverMicros() / costs.get(2).serverMicros(),
                            size, costs.get(3).clientMicros() / costs.get(2).clientMicros()));
                }
                System.out.println();
                System.out.println(line);
            }
        }
    }

    private static final class Bench {
        private final MongoClient client;
        private final CpuMeter server;
        private final LongAdder commands;
        private final LongAdder statements;
        private int collections;

        Bench(MongoClient client, CpuMeter server, LongAdder commands, LongAdder statements) {
            this.client = client;
            this.server = server;
            this.commands = commands;
            this.statements = statements;
        }

        /** Plain one at a time, guarded one at a time, plain bulk, guarded batch: each on a document of {@code size} entries. */
        List<Cost> measureAll(int size, int actions) {
            List<Cost> costs = new ArrayList<>();
            for (int way = 0; way < 4; way++) {
                boolean guarded = way % 2 == 1;
                boolean batched = way >= 2;
                MongoCollection<BsonDocument> students = client.getDatabase("guardcost")
                        .getCollection("students_" + (++collections), BsonDocument.class);
                GuardedApplier applier = GuardedApplier.create(students, Enrollment.STUDENT_SCHEMA);
                Random random = new Random(size);
                long[] seq = {0};
                // the document, built to size: every class enrolled, every other one dropped
                List<Operation> build = new ArrayList<>();
                for (int c = 0; c < size; c++) {
                    build.add(Operation.add("hot", ++seq[0], Enrollment.CLASSES, "C" + c));
                }
                for (int c = 0; c < size; c += 2) {
                    build.add(Operation.remove("hot", ++seq[0], Enrollment.CLASSES, "C" + c));
                }
                write(students, applier, guarded, build);
                List<Operation> ops = new ArrayList<>(actions);
                for (int i = 0; i < actions; i++) {
                    double action = random.nextDouble();
                    String course = "C" + random.nextInt(size);
                    ops.add(action < 0.4 ? Operation.add("hot", ++seq[0], Enrollment.CLASSES, course)
                            : action < 0.7 ? Operation.remove("hot", ++seq[0], Enrollment.CLASSES, course)
                            : Operation.assign("hot", ++seq[0], Enrollment.NAME, new BsonString("name-" + seq[0])));
                }
                long commandsBefore = commands.sum();
                long statementsBefore = statements.sum();
                server.start();
                long client0 = THREADS.getCurrentThreadCpuTime();
                if (batched) {
                    for (int from = 0; from < ops.size(); from += BATCH) {
                        write(students, applier, guarded, ops.subList(from, Math.min(ops.size(), from + BATCH)));
                    }
                } else {
                    for (Operation op : ops) {
                        write(students, applier, guarded, List.of(op));
                    }
                }
                long clientNanos = THREADS.getCurrentThreadCpuTime() - client0;
                server.sample();
                costs.add(new Cost(server.nanos() / 1e3 / actions, clientNanos / 1e3 / actions,
                        (statements.sum() - statementsBefore) / (double) actions, (commands.sum() - commandsBefore) / (double) actions));
                students.drop();
            }
            return costs;
        }

        private static void write(MongoCollection<BsonDocument> students, GuardedApplier applier, boolean guarded,
                                  List<Operation> ops) {
            if (guarded) {
                if (ops.size() == 1) {
                    applier.apply(ops.get(0));
                } else {
                    for (BatchResult result : applier.applyAll(ops)) {
                        if (result instanceof BatchResult.Failed failed) {
                            throw new IllegalStateException("guarded write failed: " + failed.error(), failed.error());
                        }
                    }
                }
            } else if (ops.size() == 1) {
                UpdateOneModel<BsonDocument> one = plain(ops.get(0));
                students.updateOne(one.getFilter(), one.getUpdate(), UPSERT);
            } else {
                List<WriteModel<BsonDocument>> writes = new ArrayList<>();
                ops.forEach(op -> writes.add(plain(op)));
                students.bulkWrite(writes, new BulkWriteOptions().ordered(true));
            }
        }

        /** compare's rivals' write: $addToSet, $pull or $set, upserted. */
        private static UpdateOneModel<BsonDocument> plain(Operation op) {
            Bson update = op instanceof Operation.Add add ? Updates.addToSet(add.field(), add.element())
                    : op instanceof Operation.Remove remove ? Updates.pull(remove.field(), remove.element())
                    : Updates.set(((Operation.Assign) op).field(), ((Operation.Assign) op).value());
            return new UpdateOneModel<>(eq("_id", op.entity()), update, UPSERT);
        }
    }
}
