package dev.orderless.chaos;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import dev.orderless.demo.Enrollment;
import dev.orderless.history.History;
import dev.orderless.testing.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * What the version history costs: batched consumers with and without it, side by side, with no added latency
 * and with 2 ms per MongoDB round trip, and the bytes one record takes. Each pair runs three times, alternating,
 * and the table gives the median of the three ratios; then the {@code HISTORY} line. Runs alone (about two
 * minutes) with
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=HistoryBenchmark
 * </pre>
 */
class HistoryBenchmark {
    private static final int ROUNDS = 3;

    @Test
    void run() throws Exception {
        try (MongoBackend mongo = Backends.mongo(); RabbitBackend rabbit = RabbitBackends.rabbit()) {
            LongAdder commands = new LongAdder();
            String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
            CachingConnectionFactory cf = new CachingConnectionFactory(rabbit.uri());
            cf.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
            cf.setPublisherReturns(true);
            try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
                 MongoClient fast = ConsumerBatchBenchmark.counting(mongo.connectionString(), commands);
                 MongoClient slow = ConsumerBatchBenchmark.counting("mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true", commands)) {
                proxy.latency(Duration.ofMillis(1));   // each way: 2 ms per round trip
                String name = MongoBackend.freshDatabaseName("bench_history");
                MongoDatabase[] dbs = {fast.getDatabase(name), slow.getDatabase(name)};
                ConsumerBatchBenchmark consumers = new ConsumerBatchBenchmark(cf, commands);
                ConsumerOptions defaults = ConsumerOptions.ofDefaults("q");
                int batch = defaults.batchSize();
                int prefetch = defaults.prefetch();
                List<MongoCollection<?>> histories = new ArrayList<>();
                consumers.measure(dbs[0], 2, batch, prefetch, 3000);   // warm-up of both, not reported
                consumers.measure(dbs[0], 2, batch, prefetch, 3000, Optional.of(recordingIn(dbs[0], histories)));

                System.out.println("[bench] ## What the version history costs");
                System.out.println("[bench]");
                System.out.println("[bench] Batched consumers (the defaults: batch " + batch + ", prefetch " + prefetch
                        + ") drain the same mix of add / remove / assign, without and with the history (one insert per"
                        + " batch before its apply); each pair " + ROUNDS + " times, alternating; the ratio is the median.");
                System.out.println("[bench]");
                System.out.println("[bench] | added latency | consumers | without ops/s | with ops/s | with / without"
                        + " | round trips/op without | with | client CPU µs/op without | with |");
                System.out.println("[bench] |---|---|---|---|---|---|---|---|---|");
                double[] ratio = new double[2];
                for (int l = 0; l < 2; l++) {
                    for (int n : new int[] {1, 4}) {
                        List<Double> ratios = new ArrayList<>();
                        ConsumerBatchBenchmark.Run without = null;
                        ConsumerBatchBenchmark.Run with = null;
                        for (int r = 0; r < ROUNDS; r++) {
                            int messages = l == 0 ? 4000 : 3000;
                            without = consumers.measure(dbs[l], n, batch, prefetch, messages);
                            with = consumers.measure(dbs[l], n, batch, prefetch, messages,
                                    Optional.of(recordingIn(dbs[l], histories)));
                            ratios.add(with.opsPerSecond() / without.opsPerSecond());
                        }
                        Collections.sort(ratios);
                        double median = ratios.get(ROUNDS / 2);
                        if (n == 4) {
                            ratio[l] = median;
                        }
                        System.out.printf(Locale.ROOT, "[bench] | %s | %d | %,.0f | %,.0f | %.2f | %.3f | %.3f | %.0f | %.0f |%n",
                                l == 0 ? "none" : "2 ms", n, without.opsPerSecond(), with.opsPerSecond(), median,
                                without.roundTripsPerOp(), with.roundTripsPerOp(), without.cpuMicrosPerOp(),
                                with.cpuMicrosPerOp());
                    }
                }
                long bytes = 0;
                long records = 0;
                for (MongoCollection<?> h : histories) {
                    for (RawBsonDocument record : h.withDocumentClass(RawBsonDocument.class).find()) {
                        bytes += record.getByteBuffer().remaining();
                        records++;
                    }
                }
                double perRecord = records == 0 ? 0 : (double) bytes / records;
                System.out.println("[bench]");
                System.out.printf(Locale.ROOT, "[bench] %,d records, %.0f bytes each on average (BSON, before MongoDB's"
                        + " own overhead and the _id and {_id.entity, _id.seq} indexes)%n", records, perRecord);
                dbs[0].drop();
                System.out.printf(Locale.ROOT, "HISTORY with_over_without_batched_4c_0ms=%.2f with_over_without_batched_4c_2ms=%.2f"
                        + " bytes_per_record=%.0f%n", ratio[0], ratio[1], perRecord);
            } finally {
                cf.destroy();
            }
        }
    }

    /** A history beside the applier's collection, through the same client (the same added latency). */
    private static java.util.function.Function<dev.orderless.apply.GuardedApplier, History> recordingIn(
            MongoDatabase db, List<MongoCollection<?>> histories) {
        return applier -> {
            MongoCollection<org.bson.BsonDocument> records = db.getCollection(
                    History.collectionName(applier.reads().getNamespace().getCollectionName()), org.bson.BsonDocument.class);
            histories.add(records);
            return History.of(records, Enrollment.STUDENT_SCHEMA);
        };
    }
}
