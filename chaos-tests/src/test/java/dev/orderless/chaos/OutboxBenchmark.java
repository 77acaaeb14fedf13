package dev.orderless.chaos;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.outbox.Outbox;
import dev.orderless.outbox.OutboxOptions;
import dev.orderless.outbox.OutboxRelay;
import dev.orderless.outbox.RelayOptions;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import dev.orderless.testing.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * What a web request pays: {@code Outbox.record} (stamp, insert; two MongoDB round trips) beside
 * {@code StampingPublisher.publish} (stamp, publish and wait for the confirm), with 2 ms added to every
 * round trip to MongoDB and to the broker (TCP proxies), measured side by side in one run: latency of one
 * call (one thread) and throughput (16 threads), as ratios to stamp-and-publish. Then how fast one relay
 * drains what was recorded. Run alone:
 * {@code mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=OutboxBenchmark}.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OutboxBenchmark {
    private static final int CALLS = 1000;
    private static final int THREADS = 16;

    @Test
    void run(MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory plainRabbit) throws Exception {
        String name = MongoBackend.freshDatabaseName("outbox_bench");
        String[] target = new ConnectionString(mongo.connectionString()).getHosts().get(0).split(":");
        String queue = RabbitExtension.uniqueQueue("outbox-bench");
        new RabbitAdmin(plainRabbit).declareQueue(new Queue(queue, true, false, false));
        try (TcpProxy mongoProxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
             TcpProxy rabbitProxy = TcpProxy.start(rabbit.uri().getHost(), rabbit.uri().getPort());
             MongoClient client = MongoClients.create(MongoClientSettings.builder().applyConnectionString(
                     new ConnectionString("mongodb://127.0.0.1:" + mongoProxy.port() + "/?directConnection=true"))
                     .writeConcern(WriteConcern.MAJORITY).build())) {
            mongoProxy.latency(Duration.ofMillis(1));   // each way: 2 ms per round trip
            rabbitProxy.latency(Duration.ofMillis(1));
            CachingConnectionFactory slowRabbit = new CachingConnectionFactory(rabbit.uri());
            slowRabbit.setHost("127.0.0.1");
            slowRabbit.setPort(rabbitProxy.port());
            slowRabbit.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
            slowRabbit.setPublisherReturns(true);
            slowRabbit.setChannelCacheSize(THREADS * 2);
            MongoDatabase db = client.getDatabase(name);
            StampingPublisher direct = new StampingPublisher(
                    MongoCounterStamper.create(db.getCollection("counters_direct", BsonDocument.class)),
                    ConfirmingPublisher.toQueue(slowRabbit, queue, PublisherOptions.ofDefaults()));
            Outbox outbox = Outbox.create(db.getCollection("outbox", BsonDocument.class),
                    MongoCounterStamper.create(db.getCollection("counters_outbox", BsonDocument.class)),
                    OutboxOptions.ofDefaults());
            Function<Integer, Operation> publish = i -> direct.publish("p" + i % 200, seq -> Operation.delete("p" + i % 200, seq));
            Function<Integer, Operation> record = i -> outbox.record("r" + i % 200, seq -> Operation.delete("r" + i % 200, seq));

            latency(publish, 100);   // warm-up
            latency(record, 100);
            double[] publishLatency = latency(publish, CALLS);
            double[] recordLatency = latency(record, CALLS);
            double publishRate = throughput(publish, CALLS * 4);
            double recordRate = throughput(record, CALLS * 4);

            long waiting = db.getCollection("outbox").countDocuments();
            long started = System.nanoTime();
            try (OutboxRelay relay = OutboxRelay.start(db.getCollection("outbox", BsonDocument.class),
                    ConfirmingPublisher.toQueue(slowRabbit, queue, PublisherOptions.ofDefaults()), RelayOptions.ofDefaults())) {
                Awaitility.await("drained").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(50))
                        .until(() -> db.getCollection("outbox").countDocuments() == 0);
            }
            double drainRate = waiting / ((System.nanoTime() - started) / 1e9);

            List<String> lines = new ArrayList<>();
            lines.add("| per action | mean ms | p99 ms | actions/s (" + THREADS + " threads) |");
            lines.add("|---|---|---|---|");
            lines.add(row("stamp and publish (baseline)", publishLatency, publishRate, publishLatency, publishRate));
            lines.add(row("outbox record", recordLatency, recordRate, publishLatency, publishRate));
            System.out.println("[outbox] 2 ms added to each MongoDB and broker round trip; " + CALLS
                    + " calls on one thread, " + CALLS * 4 + " on " + THREADS);
            lines.forEach(l -> System.out.println("[outbox] " + l));
            System.out.printf(Locale.ROOT, "[outbox] one relay drained %,d entries at %,.0f/s (batches of 500)%n",
                    waiting, drainRate);
            slowRabbit.destroy();
            db.drop();
        } finally {
            new RabbitAdmin(plainRabbit).deleteQueue(queue);
        }
    }

    private static String row(String what, double[] latency, double rate, double[] baseLatency, double baseRate) {
        return String.format(Locale.ROOT, "| %s | %.2f (%.2f) | %.2f (%.2f) | %,.0f (%.2f) |", what, latency[0],
                latency[0] / baseLatency[0], latency[1], latency[1] / baseLatency[1], rate, rate / baseRate);
    }

    /** Mean and p99 of one call, in ms, one thread. */
    private static double[] latency(Function<Integer, Operation> call, int calls) {
        double[] ms = new double[calls];
        for (int i = 0; i < calls; i++) {
            long t = System.nanoTime();
            call.apply(i);
            ms[i] = (System.nanoTime() - t) / 1e6;
        }
        Arrays.sort(ms);
        return new double[] {Arrays.stream(ms).average().orElse(0), ms[(int) (calls * 0.99) - 1]};
    }

    /** Calls per second with {@link #THREADS} threads. */
    private static double throughput(Function<Integer, Operation> call, int calls) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            long started = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int from = t;
                done.add(pool.submit(() -> {
                    for (int i = from; i < calls; i += THREADS) {
                        call.apply(i);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            return calls / ((System.nanoTime() - started) / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }
}
