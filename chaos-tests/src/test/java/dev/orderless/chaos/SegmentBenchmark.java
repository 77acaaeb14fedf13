package dev.orderless.chaos;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.view.FeederOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A view fed by 1, 2 and 4 segments, in one process and in two, with 2 ms added to every MongoDB round
 * trip of the feeders (a TCP proxy; the source is written directly), measured side by side in one run as
 * ratios to one segment in one process. A "process" is a feeder with a MongoDB client of its own, in this
 * JVM: the two share its 2 cores, as two processes on this machine would. Run alone:
 * {@code mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=SegmentBenchmark}.
 */
@ExtendWith(MongoExtension.class)
class SegmentBenchmark {
    private static final int STUDENTS = 400;
    private static final int ROUNDS = 3;

    @Test
    void run(MongoBackend mongo) throws Exception {
        String name = MongoBackend.freshDatabaseName("segments");
        String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
        LongAdder commands = new LongAdder();
        try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
             MongoClient plain = mongo.newClient();
             MongoClient slowA = slow(proxy);
             MongoClient slowB = slow(proxy)) {
            proxy.latency(Duration.ofMillis(1));   // each way: 2 ms per round trip
            MongoDatabase source = plain.getDatabase(name);
            List<MongoDatabase> one = List.of(slowA.getDatabase(name));
            List<MongoDatabase> two = List.of(slowA.getDatabase(name), slowB.getDatabase(name));
            ViewBatchBenchmark.measure(source, one, commands, FeederOptions.Writes.BULK, 1, STUDENTS, 1);   // warm-up
            List<String> lines = new ArrayList<>();
            lines.add("| segments | processes | events/s | ratio to 1 segment, 1 process |");
            lines.add("|---|---|---|---|");
            double base = 0;
            for (int segments : new int[] {1, 2, 4}) {
                for (List<MongoDatabase> processes : List.of(one, two)) {
                    double perSecond = ViewBatchBenchmark.measure(source, processes, commands, FeederOptions.Writes.BULK,
                            segments, STUDENTS, ROUNDS).eventsPerSecond();
                    base = base == 0 ? perSecond : base;
                    lines.add(String.format(Locale.ROOT, "| %d | %d | %,.0f | %.2f |", segments, processes.size(),
                            perSecond, perSecond / base));
                }
            }
            System.out.println("[segments] " + STUDENTS + " students renamed " + ROUNDS + " times, view writes 2 ms away");
            lines.forEach(l -> System.out.println("[segments] " + l));
            source.drop();
        }
    }

    private static MongoClient slow(TcpProxy proxy) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(
                "mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true")).build());
    }
}
