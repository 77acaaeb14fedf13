package dev.orderless.chaos;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.amqp10.Amqp10Consumer;
import dev.orderless.amqp10.Amqp10Publisher;
import dev.orderless.apply.Operation;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import dev.orderless.broker.QueueTopology;
import dev.orderless.message.Envelope;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.OperationPublisher;
import dev.orderless.publish.PublisherOptions;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The same consumers over AMQP 0-9-1 ({@link OperationConsumer}, Spring AMQP) and over AMQP 1.0
 * ({@link Amqp10Consumer}) on the same RabbitMQ 4, the same messages, the same applier: messages per second and
 * CPU per message, the client's (every Java thread but the embedded MongoDB server's) and the consumer threads'
 * alone. Then the two publishers (confirms against the accepted outcome). Each pair runs three times, alternating;
 * the ratios are medians. Needs {@code RABBITMQ4_URI} (say so and stops, exit 0, without it). Runs alone (about
 * a minute) with
 *
 * <pre>
 * RABBITMQ4_URI=amqp://guest:guest@localhost:5674/%2F mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=Amqp10Benchmark
 * </pre>
 */
class Amqp10Benchmark {
    private static final int ROUNDS = 3;

    @Test
    void run() throws Exception {
        Optional<URI> rabbitMq4 = RabbitBackends.rabbitMq4();
        if (rabbitMq4.isEmpty()) {
            System.out.println("[bench] AMQP 0-9-1 against 1.0: skipped, no RabbitMQ 4 (set "
                    + RabbitBackends.RABBITMQ4_URI + ", e.g. after ../shared/tools/rabbitmq4.sh start)");
            return;
        }
        URI uri = rabbitMq4.get();
        CachingConnectionFactory cf = new CachingConnectionFactory(uri);
        cf.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        cf.setPublisherReturns(true);
        try (MongoBackend mongo = Backends.mongo();
             Environment environment = new AmqpEnvironmentBuilder().connectionSettings().uri(uri.toString())
                     .environmentBuilder().build();
             Connection connection = environment.connectionBuilder().name("orderless-bench-amqp10").build()) {
            LongAdder commands = new LongAdder();
            try (MongoClient client = ConsumerBatchBenchmark.counting(mongo.connectionString(), commands)) {
                MongoDatabase db = client.getDatabase(MongoBackend.freshDatabaseName("bench_amqp10"));
                ConsumerBatchBenchmark consumers = new ConsumerBatchBenchmark(cf, commands);
                ConsumerBatchBenchmark.Starter overAmqp091 = (applier, options, meters) -> new ConsumerBatchBenchmark.Started(
                        OperationConsumer.builder(cf, applier).options(options).meters(meters).start(),
                        "orderless-" + options.queue());
                ConsumerBatchBenchmark.Starter overAmqp10 = (applier, options, meters) -> new ConsumerBatchBenchmark.Started(
                        Amqp10Consumer.builder(connection, applier).options(options).meters(meters).start(),
                        "orderless-amqp10-" + options.queue());

                Function<String, ConsumerOptions> batched = queue -> ConsumerOptions.ofDefaults(queue).withConcurrency(4);
                Function<String, ConsumerOptions> perMessage = queue -> batched.apply(queue).perMessage()
                        .withPrefetch(ConsumerOptions.PER_MESSAGE_PREFETCH);
                consumers.measure(db, batched.apply(queue()), 3000, overAmqp091);   // warm-up, not reported
                consumers.measure(db, batched.apply(queue()), 3000, overAmqp10);

                System.out.println("[bench] ## AMQP 0-9-1 against AMQP 1.0 (RabbitMQ " + brokerVersion(cf) + ")");
                System.out.println("[bench]");
                System.out.println("[bench] 4 consumers drain the same mix of add / remove / assign from a quorum queue"
                        + " into the same embedded MongoDB, over each protocol; each pair " + ROUNDS
                        + " times, alternating; ratios are medians. Client CPU: every Java thread but the MongoDB"
                        + " server's; consumer threads: the ones that decode, apply and settle.");
                System.out.println("[bench]");
                System.out.println("[bench] | mode | 0-9-1 msgs/s | 1.0 msgs/s | 1.0 / 0-9-1 | client CPU µs/msg 0-9-1"
                        + " | 1.0 | 1.0 / 0-9-1 | consumer threads µs/msg 0-9-1 | 1.0 |");
                System.out.println("[bench] |---|---|---|---|---|---|---|---|---|");
                double[] speed = new double[2];
                double[] cpu = new double[2];
                int row = 0;
                for (Function<String, ConsumerOptions> options : List.of(batched, perMessage)) {
                    ConsumerOptions mode = options.apply("q");
                    int messages = mode.batchSize() > 1 ? 6000 : 3000;
                    List<Double> speeds = new ArrayList<>();
                    List<Double> cpus = new ArrayList<>();
                    ConsumerBatchBenchmark.Run old = null;
                    ConsumerBatchBenchmark.Run neu = null;
                    for (int r = 0; r < ROUNDS; r++) {
                        old = consumers.measure(db, options.apply(queue()), messages, overAmqp091);
                        neu = consumers.measure(db, options.apply(queue()), messages, overAmqp10);
                        speeds.add(neu.opsPerSecond() / old.opsPerSecond());
                        cpus.add(neu.clientCpuMicrosPerOp() / old.clientCpuMicrosPerOp());
                    }
                    speed[row] = median(speeds);
                    cpu[row] = median(cpus);
                    System.out.printf(Locale.ROOT, "[bench] | %s | %,.0f | %,.0f | %.2f | %.0f | %.0f | %.2f | %.0f | %.0f |%n",
                            mode.batchSize() > 1 ? "batched (batch " + mode.batchSize() + ", prefetch " + mode.prefetch() + ")"
                                    : "per message (prefetch " + mode.prefetch() + ")",
                            old.opsPerSecond(), neu.opsPerSecond(), speed[row], old.clientCpuMicrosPerOp(),
                            neu.clientCpuMicrosPerOp(), cpu[row], old.cpuMicrosPerOp(), neu.cpuMicrosPerOp());
                    row++;
                }

                System.out.println("[bench]");
                System.out.println("[bench] | publisher, 20,000 messages | 0-9-1 msgs/s (confirms) | 1.0 msgs/s (accepted)"
                        + " | 1.0 / 0-9-1 | client CPU µs/msg 0-9-1 | 1.0 |");
                System.out.println("[bench] |---|---|---|---|---|---|");
                List<byte[]> bodies = bodies(20_000);
                publishRate(cf, connection, bodies, false);   // warm-up, not reported
                publishRate(cf, connection, bodies, true);
                List<Double> publishing = new ArrayList<>();
                double[] old = null;
                double[] neu = null;
                for (int r = 0; r < ROUNDS; r++) {
                    old = publishRate(cf, connection, bodies, false);
                    neu = publishRate(cf, connection, bodies, true);
                    publishing.add(neu[0] / old[0]);
                }
                double publish = median(publishing);
                System.out.printf(Locale.ROOT, "[bench] | quorum queue | %,.0f | %,.0f | %.2f | %.0f | %.0f |%n",
                        old[0], neu[0], publish, old[1], neu[1]);
                db.drop();
                System.out.printf(Locale.ROOT, "AMQP10 batched_msgs_1_0_over_0_9_1=%.2f batched_cpu_1_0_over_0_9_1=%.2f"
                                + " per_message_msgs_1_0_over_0_9_1=%.2f per_message_cpu_1_0_over_0_9_1=%.2f"
                                + " publish_1_0_over_0_9_1=%.2f%n", speed[0], cpu[0], speed[1], cpu[1], publish);
            }
        } finally {
            cf.destroy();
        }
    }

    /** Publishes {@code bodies} to a fresh queue; {messages/s, client CPU µs per message}. */
    private static double[] publishRate(CachingConnectionFactory cf, Connection connection, List<byte[]> bodies,
                                        boolean amqp10) {
        String queue = queue();
        QueueTopology.declare(cf, queue, queue + ".dlq");
        try {
            OperationPublisher publisher = amqp10 ? Amqp10Publisher.toQueue(connection, queue, PublisherOptions.ofDefaults())
                    : ConfirmingPublisher.toQueue(cf, queue, PublisherOptions.ofDefaults());
            long cpu = ConsumerBatchBenchmark.clientCpu();
            long started = System.nanoTime();
            publisher.publishRaw(bodies);
            double seconds = (System.nanoTime() - started) / 1e9;
            double micros = (ConsumerBatchBenchmark.clientCpu() - cpu) / 1e3 / bodies.size();
            if (publisher instanceof AutoCloseable closeable) {
                closeable.close();
            }
            return new double[] {bodies.size() / seconds, micros};
        } catch (Exception e) {
            throw new IllegalStateException("publishing to " + queue + " failed", e);
        } finally {
            RabbitAdmin admin = new RabbitAdmin(cf);
            admin.deleteQueue(queue);
            admin.deleteQueue(queue + ".dlq");
        }
    }

    private static List<byte[]> bodies(int messages) {
        Envelope envelope = new Envelope();
        List<byte[]> bodies = new ArrayList<>();
        for (Operation op : ApplierBenchmark.mixedOps(messages, ApplierBenchmark.ENTITIES, 1, new Random(messages))) {
            bodies.add(envelope.encode(op));
        }
        return bodies;
    }

    private static String queue() {
        return "orderless.bench.amqp10." + System.nanoTime();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static String brokerVersion(CachingConnectionFactory cf) {
        return String.valueOf(cf.createConnection().getDelegate().getServerProperties().get("version"));
    }

}
