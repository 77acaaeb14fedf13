package dev.orderless.chaos;

import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * What the console's letters cost, from one run: console applications in processes of their own ({@link
 * ConsoleProcess}), on the real broker and MongoDB of the run (embedded unless MONGODB_URI).
 * <ol>
 *   <li>The dead-letters page's time to its first rows: the two requests it makes first, {@code GET
 *       api/letters/groups} then {@code GET api/letters?limit=50}, one after the other over HTTP, against a console
 *       with 10,000 letters stored beside one with 100 (both up at once, asked in turn; the median of
 *       {@value #ROUNDS} rounds each after {@value #WARM_UP} to warm up).
 *   <li>Ingestion: 10,000 letters published into a dead-letter queue with publisher confirms (letters/s, every
 *       confirm awaited), then a console started on it: letters/s into the store, from the first letter stored to the
 *       last (the store's count, polled), and its ratio to the publish rate.
 *   <li>A console killed mid-ingestion (SIGKILL at 30 % stored, started again), as {@link ConsoleIngestionKillTest}
 *       asserts it: letters lost and stored twice.
 * </ol>
 * No figure is asserted; it prints a table and one {@code BENCH} line. In CI's failover invocation (so the log shows
 * it) and alone: {@code mvn -B -pl chaos-tests verify -Pbench -Dtest=ConsoleLettersBenchmark}.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsoleLettersBenchmark {
    private static final int MANY = 10_000;
    private static final int FEW = 100;
    private static final int WARM_UP = 2;
    private static final int ROUNDS = 7;
    private static final int PAGE = 50;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void run(MongoBackend mongo, RabbitBackend broker, ConnectionFactory rabbit) throws Exception {
        try (LetterFlood few = new LetterFlood("bench-few", rabbit, broker.uri(), mongo);
             LetterFlood many = new LetterFlood("bench-many", rabbit, broker.uri(), mongo);
             LetterFlood killed = new LetterFlood("bench-kill", rabbit, broker.uri(), mongo)) {
            few.publish(FEW);
            Duration published = many.publish(MANY);
            double publishRate = MANY / seconds(published);

            List<FirstRows> fewRows = new ArrayList<>();
            List<FirstRows> manyRows = new ArrayList<>();
            Ingested ingested;
            try (ConsoleProcess fewConsole = few.console("first-rows");
                 ConsoleProcess manyConsole = startAfter(few, () -> many.console("ingest"))) {
                ingested = ingest(many);
                many.awaitAllStored();
                for (int round = 0; round < WARM_UP + ROUNDS; round++) {   // in turn: one machine's moment for both
                    FirstRows a = firstRows(fewConsole, FEW);
                    FirstRows b = firstRows(manyConsole, MANY);
                    if (round >= WARM_UP) {
                        fewRows.add(a);
                        manyRows.add(b);
                    }
                }
                manyConsole.stop();
                fewConsole.stop();
            }

            killed.publish(MANY);
            LetterFlood.Killed kill = killed.killedMidIngestion(0.3);
            report(fewRows, manyRows, publishRate, ingested, kill);
        }
    }

    /** Starts {@code next} once {@code before}'s letters are all stored: ingestion is clocked alone. */
    private static ConsoleProcess startAfter(LetterFlood before, java.util.concurrent.Callable<ConsoleProcess> next)
            throws Exception {
        before.awaitAllStored();
        return next.call();
    }

    /** From the first letter stored to the last, as the store counts them (polled every 10 ms). */
    record Ingested(long letters, Duration took) {
        double rate() {
            return letters / seconds(took);
        }
    }

    private static Ingested ingest(LetterFlood flood) {
        long[] first = new long[2];   // count and time of the first poll that found letters stored
        Awaitility.await("a first letter stored").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(10))
                .until(() -> {
                    long stored = flood.storedRoughly();
                    first[0] = stored;
                    first[1] = System.nanoTime();
                    return stored > 0;
                });
        Awaitility.await("every letter stored").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(10))
                .until(() -> flood.storedRoughly() >= flood.published());
        long took = System.nanoTime() - first[1];
        return new Ingested(flood.published() - first[0], Duration.ofNanos(took));
    }

    /** One round of the page's first two requests: ms to each answer, and to both (one after the other). */
    record FirstRows(double groupsMs, double lettersMs) {
        double ms() {
            return groupsMs + lettersMs;
        }
    }

    /** The page's first two requests, one after the other; checks each answers what is stored. */
    private FirstRows firstRows(ConsoleProcess console, int stored) throws Exception {
        long t0 = System.nanoTime();
        BsonDocument groups = get(console, "api/letters/groups");
        long t1 = System.nanoTime();
        BsonDocument letters = get(console, "api/letters?limit=" + PAGE);
        FirstRows rows = new FirstRows((t1 - t0) / 1e6, (System.nanoTime() - t1) / 1e6);
        long dead = groups.getArray("queues").stream().mapToLong(q -> q.asDocument().getNumber("dead").longValue()).sum();
        if (dead != stored || letters.getNumber("total").longValue() != stored
                || letters.getArray("letters").size() != Math.min(PAGE, stored)) {
            throw new IllegalStateException("the console answered other letters than the " + stored + " stored: dead "
                    + dead + ", total " + letters.get("total") + ", rows " + letters.getArray("letters").size());
        }
        return rows;
    }

    private BsonDocument get(ConsoleProcess console, String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(console.uri(path))
                .timeout(Duration.ofMinutes(1)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("GET " + path + " answered " + response.statusCode() + ": "
                    + response.body());
        }
        return BsonDocument.parse(response.body());
    }

    private static void report(List<FirstRows> few, List<FirstRows> many, double publishRate, Ingested ingested,
                               LetterFlood.Killed kill) {
        double fewMs = median(few.stream().map(FirstRows::ms).toList());
        double manyMs = median(many.stream().map(FirstRows::ms).toList());
        LetterFlood.Verdict verdict = kill.verdict();
        System.out.println();
        System.out.println("[bench] console letters: console applications in processes of their own, "
                + Runtime.getRuntime().availableProcessors() + " cores");
        System.out.printf(Locale.ROOT, "[bench] %-44s %12s %12s %12s%n", "dead-letters page, first rows (median ms)",
                "groups", "50 letters", "both");
        for (Object[] row : new Object[][] {{FEW, few, fewMs}, {MANY, many, manyMs}}) {
            @SuppressWarnings("unchecked")
            List<FirstRows> rounds = (List<FirstRows>) row[1];
            System.out.printf(Locale.ROOT, "[bench] %-44s %12.1f %12.1f %12.1f%n", row[0] + " letters stored",
                    median(rounds.stream().map(FirstRows::groupsMs).toList()),
                    median(rounds.stream().map(FirstRows::lettersMs).toList()), row[2]);
        }
        System.out.printf(Locale.ROOT, "[bench] %-70s %12.2f%n", "ratio " + MANY + " / " + FEW, manyMs / fewMs);
        System.out.printf(Locale.ROOT, "[bench] %-70s %12.0f%n", MANY + " letters published with confirms, letters/s",
                publishRate);
        System.out.printf(Locale.ROOT, "[bench] %-70s %12.0f%n", "ingested from the dead-letter queue, letters/s",
                ingested.rate());
        System.out.printf(Locale.ROOT, "[bench] %-70s %12.2f%n", "ratio ingested / published",
                ingested.rate() / publishRate);
        System.out.printf(Locale.ROOT, "[bench] console SIGKILLed with %d of %d letters stored, started again: stored %d,"
                        + " lost %d, doubled %d, left in the queue %d%n", kill.storedAtKill(), verdict.published(),
                verdict.stored(), verdict.lost(), verdict.doubled(), kill.queueAfter());
        System.out.printf(Locale.ROOT, "BENCH console_letters first_rows_ms_%d=%.0f first_rows_%d_over_%d=%.2f"
                        + " ingest_letters_per_s=%.0f ingest_over_publish=%.2f lost=%d doubled=%d%n", MANY, manyMs, MANY,
                FEW, manyMs / fewMs, ingested.rate(), ingested.rate() / publishRate, verdict.lost(), verdict.doubled());
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
