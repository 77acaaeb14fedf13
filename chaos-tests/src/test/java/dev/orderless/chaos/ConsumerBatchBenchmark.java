package dev.orderless.chaos;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.amqp.QueueTopology;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.demo.Enrollment;
import dev.orderless.message.Envelope;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * One {@link OperationConsumer} run through the broker: the messages are published first, then the
 * consumer drains them. Measured between 10% and 100% of the messages (so start-up is not in it):
 * messages per second, MongoDB commands per message (counted by the driver's command listener on the
 * applier's client: nothing estimated), and CPU per message of the consumer threads (the container's
 * threads, which decode, apply, ack: the library's own cost whatever the server; the AMQP client's I/O
 * thread is not in it).
 */
final class ConsumerBatchBenchmark {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** What one run measured. */
    record Run(double opsPerSecond, double roundTripsPerOp, double cpuMicrosPerOp) {
    }

    private final CachingConnectionFactory cf;
    private final LongAdder commands;

    /** {@code commands} counts every command the clients behind the databases given to {@link #measure} send. */
    ConsumerBatchBenchmark(CachingConnectionFactory cf, LongAdder commands) {
        this.cf = cf;
        this.commands = commands;
    }

    /** Per-message mode (batch size 1) when {@code batchSize} is 1. */
    Run measure(MongoDatabase db, int consumers, int batchSize, int prefetch, int messages) {
        return measure(db, consumers, batchSize, prefetch, messages, java.util.Optional.empty());
    }

    /**
     * With {@code history}, the consumer records every operation in it before applying it (one insert per
     * batch); the history is kept for the caller to weigh, and dropped by it.
     */
    Run measure(MongoDatabase db, int consumers, int batchSize, int prefetch, int messages,
                java.util.Optional<java.util.function.Function<GuardedApplier, dev.orderless.history.History>> history) {
        String queue = "orderless.bench.batch." + System.nanoTime();
        QueueTopology.declare(cf, queue, queue + ".dlq");
        publish(queue, messages);
        String collection = "consume" + System.nanoTime();
        GuardedApplier applier = GuardedApplier.create(db.getCollection(collection, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA);
        ConsumerOptions options = ConsumerOptions.ofDefaults(queue).withConcurrency(consumers);
        options = batchSize > 1 ? options.withBatch(batchSize, Duration.ofMillis(20)).withPrefetch(prefetch)
                : options.perMessage().withPrefetch(prefetch);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        double[] from = new double[4];
        double[] to = new double[4];
        OperationConsumer.Builder builder = OperationConsumer.builder(cf, applier).options(options).meters(meters);
        history.ifPresent(h -> builder.history(h.apply(applier)));
        try (OperationConsumer consumer = builder.start()) {
            String threads = "orderless-" + queue;
            sample(from, meters, threads, messages / 10);
            sample(to, meters, threads, messages);
        } finally {
            RabbitAdmin admin = new RabbitAdmin(cf);
            admin.deleteQueue(queue);
            admin.deleteQueue(queue + ".dlq");
            db.getCollection(collection).drop();
        }
        double done = to[0] - from[0];
        return new Run(done / ((to[1] - from[1]) / 1e9), (to[2] - from[2]) / done, (to[3] - from[3]) / 1e3 / done);
    }

    /** Waits for {@code atLeast} outcomes, then records {messages, nanoTime, commands, consumer thread CPU ns}. */
    private void sample(double[] into, SimpleMeterRegistry meters, String threads, int atLeast) {
        Awaitility.await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(2))
                .until(() -> outcomes(meters) >= atLeast);
        into[0] = outcomes(meters);
        into[1] = System.nanoTime();
        into[2] = commands.sum();
        into[3] = cpu(threads);
    }

    private static double outcomes(SimpleMeterRegistry meters) {
        return meters.find("orderless.consume.outcomes").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    /** CPU time of the live threads whose name starts with {@code prefix}: the container's consumers. */
    static long cpu(String prefix) {
        long total = 0;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getName().startsWith(prefix)) {
                total += Math.max(0, THREADS.getThreadCpuTime(thread.getId()));
            }
        }
        return total;
    }

    private void publish(String queue, int messages) {
        Envelope envelope = new Envelope();
        List<byte[]> bodies = new ArrayList<>();
        for (Operation op : ApplierBenchmark.mixedOps(messages, ApplierBenchmark.ENTITIES, 1, new Random(messages))) {
            bodies.add(envelope.encode(op));
        }
        ConfirmingPublisher.toQueue(cf, queue, PublisherOptions.ofDefaults()).publishRaw(bodies);
    }

    /** A client to {@code uri} that counts every command it sends into {@code commands}: the round trips. */
    static MongoClient counting(String uri, LongAdder commands) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        commands.increment();
                    }
                }).build());
    }
}
