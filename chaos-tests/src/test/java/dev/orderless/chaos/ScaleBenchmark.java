package dev.orderless.chaos;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.backends.Backends;
import dev.orderless.backends.EmbeddedMongo;
import dev.orderless.backends.MongoBackend;
import dev.orderless.demo.Enrollment;
import dev.orderless.demo.Main;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The benchmark's sections on scale: the cost of a guarded op as the collection grows, and the demo at
 * 200 and at 100,000 students. Both exist to show that an op's cost does not depend on how many
 * documents the collection holds, as on MongoDB, where a filter that pins {@code _id} reads one document.
 */
final class ScaleBenchmark {
    /** Where a section writes its lines (the benchmark's table). */
    interface Out {
        void line(String format, Object... args);
    }

    private static final int[] SIZES = {1_000, 10_000, 100_000};
    private static final int OPS = 1_500;
    private static final int ROUNDS = 6;

    private ScaleBenchmark() {
    }

    static void collectionSize(MongoDatabase db, MongoBackend mongo, Out out) {
        out.line("## Cost of a guarded op as the collection grows");
        out.line("");
        out.line("A collection filled with N entities (copies of a document the applier wrote), then the same random add /"
                + " remove / assign ops on every size, over entities spread across the collection, from 1 consumer:"
                + " %,d ops per size in each of %d rounds, the sizes in a different order each round, so that pauses and"
                + " warm-up fall on all of them. Documents examined: counted by the embedded server's query path,"
                + " MongoDB's `totalDocsExamined` (n/a on other backends).", OPS, ROUNDS);
        out.line("");
        out.line("| entities in the collection | guarded ops/s | ratio to 1k | documents examined per op |");
        out.line("|---|---|---|---|");
        Map<Integer, Sized> sized = new LinkedHashMap<>();
        for (int entities : SIZES) {
            MongoCollection<BsonDocument> coll = db.getCollection("size" + entities, BsonDocument.class);
            GuardedApplier applier = GuardedApplier.create(coll, Enrollment.STUDENT_SCHEMA);
            fill(coll, applier, entities);
            sized.put(entities, new Sized(coll, applier));
        }
        System.gc();   // the fill's garbage should not land on whichever size runs first
        for (int round = 0; round < ROUNDS; round++) {
            long seq = 1_000 + round * OPS;
            for (int i = 0; i < SIZES.length; i++) {
                // orders 012, 210, 120, 021, 201, 102: each size runs first, second and last twice
                int k = (round % 2 == 0 ? i : SIZES.length - 1 - i) + round / 2;
                int entities = SIZES[k % SIZES.length];
                Sized s = sized.get(entities);
                List<Operation> ops = spread(ApplierBenchmark.mixedOps(OPS, SIZES[0], seq, new Random(seq)), entities);
                long examined = examined(mongo, s.coll);
                long began = System.nanoTime();
                ops.forEach(s.applier::apply);
                s.nanos += System.nanoTime() - began;
                s.ops += ops.size();
                s.examined += examined(mongo, s.coll) - examined;
            }
        }
        double base = sized.get(SIZES[0]).rate();
        for (int entities : SIZES) {
            Sized s = sized.get(entities);
            out.line("| %,d | %,.0f | %.2f | %s |", entities, s.rate(), s.rate() / base,
                    mongo instanceof EmbeddedMongo ? String.format("%.2f", (double) s.examined / s.ops) : "n/a");
            s.coll.drop();
        }
        out.line("");
    }

    private static final class Sized {
        final MongoCollection<BsonDocument> coll;
        final GuardedApplier applier;
        long nanos;
        long ops;
        long examined;

        Sized(MongoCollection<BsonDocument> coll, GuardedApplier applier) {
            this.coll = coll;
            this.applier = applier;
        }

        double rate() {
            return ops / (nanos / 1e9);
        }
    }

    /**
     * The same ops on every size: entity s<i> of 1,000 becomes s<i * N / 1000>, so every collection sees the
     * same histories on the same number of documents, spread across all of it.
     */
    private static List<Operation> spread(List<Operation> ops, int entities) {
        int stride = entities / SIZES[0];
        List<Operation> spread = new ArrayList<>(ops.size());
        for (Operation op : ops) {
            String entity = "s" + Integer.parseInt(op.entity().substring(1)) * stride;
            if (op instanceof Operation.Add add) {
                spread.add(Operation.add(entity, add.seq(), add.field(), add.element(), add.attrs()));
            } else if (op instanceof Operation.Remove remove) {
                spread.add(Operation.remove(entity, remove.seq(), remove.field(), remove.element()));
            } else if (op instanceof Operation.Assign assign) {
                spread.add(Operation.assign(entity, assign.seq(), assign.field(), assign.value()));
            } else {
                throw new IllegalArgumentException("the mix has no deletes: " + op);
            }
        }
        return spread;
    }

    /** {@code entities} documents s0..s(N-1), each a copy of one the applier wrote (seqs 1 and 2). */
    private static void fill(MongoCollection<BsonDocument> coll, GuardedApplier applier, int entities) {
        applier.apply(Operation.assign("s0", 1, Enrollment.NAME, new BsonString("N")));
        applier.apply(Operation.add("s0", 2, Enrollment.CLASSES, "C1"));
        BsonDocument template = coll.find(eq("_id", "s0")).first();
        List<BsonDocument> batch = new ArrayList<>();
        for (int i = 1; i < entities; i++) {
            batch.add(template.clone().append("_id", new BsonString("s" + i)));
            if (batch.size() == 5_000 || i == entities - 1) {
                coll.insertMany(batch);
                batch.clear();
            }
        }
    }

    private static long examined(MongoBackend mongo, MongoCollection<?> coll) {
        return mongo instanceof EmbeddedMongo embedded
                ? embedded.documentsExamined(coll.getNamespace().getDatabaseName(), coll.getNamespace().getCollectionName())
                : 0;
    }

    static void demoAtScale(Out out) throws Exception {
        out.line("## The demo as the number of students grows");
        out.line("");
        out.line("`run` with its defaults beside `run --students 100000 --ops 20000`, each in a JVM of its own on the"
                + " backends chosen as for the tests. Each action picks one of the students at random, so the second run"
                + " writes as many student documents as it has distinct actors. Throughput: messages from first publish"
                + " to last ack. View lag: from the last ack until every roster matched the students.");
        out.line("");
        out.line("| run | student documents | messages/s | ratio to default | view lag | result |");
        out.line("|---|---|---|---|---|---|");
        Demo small = demo();
        Demo large = demo("--students", "100000", "--ops", "20000");
        out.line("| `run` (200 students, 5,000 actions) | %,d | %,.0f | 1.00 | %s | %s |", small.students, small.rate,
                small.viewLag, small.result);
        out.line("| `run --students 100000 --ops 20000` | %,d | %,.0f | %.2f | %s | %s |", large.students, large.rate,
                large.rate / small.rate, large.viewLag, large.result);
        out.line("");
    }

    private record Demo(double rate, int students, String viewLag, String result) {
    }

    private static final Pattern RATE = Pattern.compile("throughput\\s+([\\d,]+) messages/s");
    private static final Pattern LAG = Pattern.compile("view lag\\s+([\\d.]+ s)");
    /** The demo's RESULT line; {@code queued=N} between lost and rosters_consistent, optional. */
    static final Pattern RESULT = Pattern.compile(
            "RESULT converged=(\\S+) entities=(\\d+) .* lost=(\\d+)(?: queued=(\\d+))? rosters_consistent=(\\S+)");

    private static Demo demo(String... options) throws Exception {
        Path stdout = Files.createTempFile("orderless-demo", ".out");
        Path stderr = Files.createTempFile("orderless-demo", ".err");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Duser.language=en", "-Duser.country=US"));   // the output is parsed: fixed number format
        for (String property : List.of(Backends.MODE, Backends.MONGODB_URI, Backends.RABBITMQ_URI)) {
            // the backends chosen for this run reach the tests as system properties (surefire, -D); pass them on
            if (System.getProperty(property) != null) {
                command.add("-D" + property + "=" + System.getProperty(property));
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "run"));
        command.addAll(List.of(options));
        String shown = String.join(" ", List.of(options));
        Process process = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        try {
            if (!process.waitFor(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("the demo run " + shown + " did not finish in 10 minutes");
            }
            String text = Files.readString(stdout);
            Matcher rate = RATE.matcher(text);
            Matcher lag = LAG.matcher(text);
            Matcher result = RESULT.matcher(text);
            if (!rate.find() || !result.find()) {
                throw new IllegalStateException("the demo run " + shown + " printed no result (exit "
                        + process.exitValue() + "):\n" + text + "\n" + Files.readString(stderr));
            }
            return new Demo(Double.parseDouble(rate.group(1).replace(",", "")), Integer.parseInt(result.group(2)),
                    lag.find() ? lag.group(1) : "not consistent",
                    "converged=" + result.group(1) + " lost=" + result.group(3)
                            + (result.group(4) == null ? "" : " queued=" + result.group(4))
                            + " rosters_consistent=" + result.group(5));
        } finally {
            process.destroyForcibly();
            Files.deleteIfExists(stdout);
            Files.deleteIfExists(stderr);
        }
    }
}
