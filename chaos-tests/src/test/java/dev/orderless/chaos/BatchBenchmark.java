package dev.orderless.chaos;

import dev.orderless.backends.rabbit.RabbitBackends;
import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.TcpProxy;
import dev.orderless.view.FeederOptions;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * Batch apply, measured: per-message beside batched consumers through the broker at 1, 2, 4, 8 consumers
 * with no added latency and with 2 ms per MongoDB round trip (a TCP proxy), a sweep of batch size and
 * prefetch, and the view feeder's one-write-at-a-time beside its bulk writes; then a model of the same
 * figures on a real MongoDB, labelled as such; then the {@code BENCH} line. Part of {@link Benchmark};
 * runs alone (about three minutes) with
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=BatchBenchmark
 * </pre>
 */
class BatchBenchmark {
    /** Model assumption: what a real primary spends on one write command with w: majority, besides the network. */
    private static final double SERVER_MS_PER_COMMAND = 1.0;
    /** Model assumption: what it spends on each document a command writes. */
    private static final double SERVER_MS_PER_DOCUMENT = 0.03;
    private static final double ADDED_MS = 2.0;

    @Test
    void run() throws Exception {
        try (MongoBackend mongo = Backends.mongo(); RabbitBackend rabbit = RabbitBackends.rabbit()) {
            String bench = measure(mongo, rabbit, text -> System.out.println("[bench] " + text));
            System.out.println(bench);
        }
    }

    /** Prints the batch tables through {@code line}; returns the {@code BENCH} line. */
    static String measure(MongoBackend mongo, RabbitBackend rabbit, Consumer<String> line) throws Exception {
        LongAdder commands = new LongAdder();
        String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
        CachingConnectionFactory cf = new CachingConnectionFactory(rabbit.uri());
        cf.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        cf.setPublisherReturns(true);
        try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
             MongoClient plain = mongo.newClient();
             MongoClient fast = ConsumerBatchBenchmark.counting(mongo.connectionString(), commands);
             MongoClient slow = ConsumerBatchBenchmark.counting("mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true", commands)) {
            proxy.latency(Duration.ofMillis(1));   // each way: 2 ms per round trip
            String name = MongoBackend.freshDatabaseName("bench_batch");
            MongoDatabase[] consumerDbs = {fast.getDatabase(name), slow.getDatabase(name)};
            ConsumerBatchBenchmark consumers = new ConsumerBatchBenchmark(cf, commands);
            ConsumerOptions defaults = ConsumerOptions.ofDefaults("q");
            int batch = defaults.batchSize();
            int prefetch = defaults.prefetch();

            line.accept("## Batch apply through the broker");
            line.accept("");
            line.accept(String.format("Each run publishes its messages (a random mix of add / remove / assign over %d"
                    + " entities), then one OperationConsumer drains them; measured from 10%% to 100%% of the messages."
                    + " Per-message: batch 1, prefetch %d. Batched: the defaults, batch %d, prefetch %d. Round trips: the"
                    + " commands the applier's client sent, per message. CPU: the container's consumer threads, per"
                    + " message.", ApplierBenchmark.ENTITIES, ConsumerOptions.PER_MESSAGE_PREFETCH, batch, prefetch));
            line.accept("");
            line.accept("| added latency | consumers | per-message ops/s | batched ops/s | batched / per-message"
                    + " | round trips/op per-message | batched | client CPU µs/op per-message | batched |");
            line.accept("|---|---|---|---|---|---|---|---|---|");
            consumers.measure(consumerDbs[0], 2, batch, prefetch, 4000);   // warm-up of both, not reported
            consumers.measure(consumerDbs[0], 2, 1, ConsumerOptions.PER_MESSAGE_PREFETCH, 2000);
            double speedup1 = 0;
            double speedup8 = 0;
            double worstRoundTrips = 0;
            double worstCpu = 0;
            ConsumerBatchBenchmark.Run perMessage2ms1c = null;
            ConsumerBatchBenchmark.Run batched2ms1c = null;
            for (int l = 0; l < 2; l++) {
                for (int n : new int[] {1, 2, 4, 8}) {
                    ConsumerBatchBenchmark.Run one = consumers.measure(consumerDbs[l], n, 1, ConsumerOptions.PER_MESSAGE_PREFETCH,
                            l == 0 ? 3000 : Math.min(2000, 500 * n));
                    ConsumerBatchBenchmark.Run all = consumers.measure(consumerDbs[l], n, batch, prefetch, l == 0 ? 6000 : 4000);
                    line.accept(String.format(Locale.ROOT, "| %s | %d | %,.0f | %,.0f | %.2f | %.2f | %.3f | %.0f | %.0f |",
                            l == 0 ? "none" : "2 ms", n, one.opsPerSecond(), all.opsPerSecond(),
                            all.opsPerSecond() / one.opsPerSecond(), one.roundTripsPerOp(), all.roundTripsPerOp(),
                            one.cpuMicrosPerOp(), all.cpuMicrosPerOp()));
                    worstRoundTrips = Math.max(worstRoundTrips, all.roundTripsPerOp());
                    worstCpu = Math.max(worstCpu, all.cpuMicrosPerOp());
                    if (l == 1 && n == 1) {
                        speedup1 = all.opsPerSecond() / one.opsPerSecond();
                        perMessage2ms1c = one;
                        batched2ms1c = all;
                    }
                    if (l == 1 && n == 8) {
                        speedup8 = all.opsPerSecond() / one.opsPerSecond();
                    }
                }
            }
            line.accept("");

            line.accept("### Batch size and prefetch, 2 ms added, 4 consumers");
            line.accept("");
            line.accept("| batch size | prefetch | ops/s | ratio to per-message | round trips/op | client CPU µs/op |");
            line.accept("|---|---|---|---|---|---|");
            ConsumerBatchBenchmark.Run base = consumers.measure(consumerDbs[1], 4, 1, ConsumerOptions.PER_MESSAGE_PREFETCH, 2000);
            line.accept(String.format(Locale.ROOT, "| 1 | %d | %,.0f | 1.00 | %.2f | %.0f |", ConsumerOptions.PER_MESSAGE_PREFETCH,
                    base.opsPerSecond(), base.roundTripsPerOp(), base.cpuMicrosPerOp()));
            int[][] sweep = {{10, 20}, {25, 50}, {50, 50}, {50, 100}, {50, 200}, {100, 200}, {200, 400}};
            for (int[] s : sweep) {
                ConsumerBatchBenchmark.Run r = consumers.measure(consumerDbs[1], 4, s[0], s[1], 4000);
                line.accept(String.format(Locale.ROOT, "| %d | %d | %,.0f | %.2f | %.3f | %.0f |", s[0], s[1],
                        r.opsPerSecond(), r.opsPerSecond() / base.opsPerSecond(), r.roundTripsPerOp(), r.cpuMicrosPerOp()));
            }
            line.accept("");

            line.accept("## View feeder: one bulk write per change event");
            line.accept("");
            line.accept("300 students, each in four of 30 class rosters and out of a fifth; the feeder catches up, then"
                    + " every student is renamed once per round (one event each, five roster ops each, all already in"
                    + " the view). Round trips: every command of the feeder's client (change stream, view writes and"
                    + " reads, lease, position commits), per event.");
            line.accept("");
            line.accept("| added latency | view writes | events/s | round trips/event | ratio to one at a time |");
            line.accept("|---|---|---|---|---|");
            ViewBatchBenchmark.measure(plain.getDatabase(name), fast.getDatabase(name), commands,
                    FeederOptions.Writes.BULK, 300, 2);   // warm-up, not reported
            double viewSpeedup = 0;
            double viewRoundTrips = 0;
            ViewBatchBenchmark.Run[] view = new ViewBatchBenchmark.Run[4];
            for (int l = 0; l < 2; l++) {
                MongoDatabase feederDb = l == 0 ? fast.getDatabase(name) : slow.getDatabase(name);
                view[2 * l] = ViewBatchBenchmark.measure(plain.getDatabase(name), feederDb, commands,
                        FeederOptions.Writes.ONE_AT_A_TIME, 300, 1);
                view[2 * l + 1] = ViewBatchBenchmark.measure(plain.getDatabase(name), feederDb, commands,
                        FeederOptions.Writes.BULK, 300, 4);
                for (int k = 0; k < 2; k++) {
                    ViewBatchBenchmark.Run r = view[2 * l + k];
                    line.accept(String.format(Locale.ROOT, "| %s | %s | %,.0f | %.2f | %.2f |", l == 0 ? "none" : "2 ms",
                            k == 0 ? "one at a time" : "bulk", r.eventsPerSecond(), r.roundTripsPerEvent(),
                            r.eventsPerSecond() / view[2 * l].eventsPerSecond()));
                }
                viewRoundTrips = Math.max(viewRoundTrips, view[2 * l + 1].roundTripsPerEvent());
            }
            viewSpeedup = view[3].eventsPerSecond() / view[2].eventsPerSecond();
            line.accept("");

            model(line, perMessage2ms1c, batched2ms1c, view[2], view[3]);
            plain.getDatabase(name).drop();
            return String.format(Locale.ROOT, "BENCH batch_speedup_2ms_1c=%.2f batch_speedup_2ms_8c=%.2f"
                    + " round_trips_per_op_batched=%.3f view_round_trips_per_event=%.2f view_speedup_2ms=%.2f"
                    + " client_cpu_us_per_op_batched=%.0f", speedup1, speedup8, worstRoundTrips, viewRoundTrips,
                    viewSpeedup, worstCpu);
        } finally {
            cf.destroy();
        }
    }

    /**
     * The measured round trips and client CPU, priced at a real primary's assumed costs: the time of an op
     * is its round trips times (network + the server's per-command cost), plus the server's per-document
     * cost, plus the client CPU measured here.
     */
    private static void model(Consumer<String> line, ConsumerBatchBenchmark.Run perMessage, ConsumerBatchBenchmark.Run batched,
                              ViewBatchBenchmark.Run viewOne, ViewBatchBenchmark.Run viewBulk) {
        line.accept("### Projected to a real MongoDB: a model, not a measurement");
        line.accept("");
        line.accept(String.format(Locale.ROOT, "Assumed: a replica-set primary %.0f ms away (as above), w: majority. Each write"
                + " command costs the server %.1f ms besides the network (the majority acknowledgement waits for a"
                + " secondary in the same region: about one intra-region round trip plus a journal commit), and each"
                + " document it writes %.2f ms (a small document updated by _id in WiredTiger). Reads are priced as"
                + " writes, which overstates them. The round trips and client CPU per op are the measured ones above"
                + " (2 ms, one consumer); the embedded server's own costs are not carried over.", ADDED_MS,
                SERVER_MS_PER_COMMAND, SERVER_MS_PER_DOCUMENT));
        line.accept("");
        line.accept("| what | round trips/op | client µs/op | modelled ms/op | modelled ops/s per consumer |");
        line.accept("|---|---|---|---|---|");
        double pm = modelledMs(perMessage.roundTripsPerOp(), 1, perMessage.cpuMicrosPerOp());
        double b = modelledMs(batched.roundTripsPerOp(), 1, batched.cpuMicrosPerOp());
        line.accept(String.format(Locale.ROOT, "| consumer, per-message | %.2f | %.0f | %.2f | %,.0f |",
                perMessage.roundTripsPerOp(), perMessage.cpuMicrosPerOp(), pm, 1000 / pm));
        line.accept(String.format(Locale.ROOT, "| consumer, batched | %.3f | %.0f | %.2f | %,.0f |",
                batched.roundTripsPerOp(), batched.cpuMicrosPerOp(), b, 1000 / b));
        double vo = modelledMs(viewOne.roundTripsPerEvent(), 5, 0);
        double vb = modelledMs(viewBulk.roundTripsPerEvent(), 5, 0);
        line.accept(String.format(Locale.ROOT, "| view event (5 roster ops), one at a time | %.2f | n/a | %.2f | %,.0f events/s |",
                viewOne.roundTripsPerEvent(), vo, 1000 / vo));
        line.accept(String.format(Locale.ROOT, "| view event (5 roster ops), bulk | %.2f | n/a | %.2f | %,.0f events/s |",
                viewBulk.roundTripsPerEvent(), vb, 1000 / vb));
        line.accept("");
        line.accept(String.format(Locale.ROOT, "Modelled batched / per-message for one consumer: %.1f; view bulk / one at a time: %.1f.",
                pm / b, vo / vb));
        line.accept("");
    }

    private static double modelledMs(double roundTrips, int documents, double clientMicros) {
        return roundTrips * (ADDED_MS + SERVER_MS_PER_COMMAND) + documents * SERVER_MS_PER_DOCUMENT + clientMicros / 1000;
    }
}
