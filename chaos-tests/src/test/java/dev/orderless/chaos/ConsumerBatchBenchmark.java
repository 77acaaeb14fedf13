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
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.broker.QueueTopology;
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

    /**
     * What one run measured. {@code cpuMicrosPerOp} is the consumer threads' CPU per message;
     * {@code clientCpuMicrosPerOp} is every Java thread's in this JVM but the embedded MongoDB server's
     * ({@code mongo-server-*}): the consumers, the AMQP client's I/O, the MongoDB driver, the JIT.
     */
    record Run(double opsPerSecond, double roundTripsPerOp, double cpuMicrosPerOp, double clientCpuMicrosPerOp) {
    }

    /** Starts consumers on {@code options.queue()} that count their outcomes in {@code meters}. */
    @FunctionalInterface
    interface Starter {
        Started start(GuardedApplier applier, ConsumerOptions options, SimpleMeterRegistry meters);
    }

    /** Running consumers, and the prefix of their threads' names. */
    record Started(AutoCloseable consumer, String threads) {
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
        ConsumerOptions options = ConsumerOptions.ofDefaults(queue).withConcurrency(consumers);
        options = batchSize > 1 ? options.withBatch(batchSize, Duration.ofMillis(20)).withPrefetch(prefetch)
                : options.perMessage().withPrefetch(prefetch);
        return measure(db, options, messages, (a, o, meters) -> {
            OperationConsumer.Builder builder = OperationConsumer.builder(cf, a).options(o).meters(meters);
            history.ifPresent(h -> builder.history(h.apply(a)));
            return new Started(builder.start(), "orderless-" + o.queue());
        });
    }

    /** {@code messages} published to {@code options.queue()} (declared here), drained by the consumers {@code starter} starts. */
    Run measure(MongoDatabase db, ConsumerOptions options, int messages, Starter starter) {
        String queue = options.queue();
        QueueTopology.declare(cf, queue, queue + ".dlq");
        publish(queue, messages);
        String collection = "consume" + System.nanoTime();
        GuardedApplier applier = GuardedApplier.create(db.getCollection(collection, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        double[] from = new double[5];
        double[] to = new double[5];
        Started started = starter.start(applier, options, meters);
        try (AutoCloseable consumer = started.consumer()) {
            sample(from, meters, started.threads(), messages / 10);
            sample(to, meters, started.threads(), messages);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("consumers on " + queue + " did not close", e);
        } finally {
            RabbitAdmin admin = new RabbitAdmin(cf);
            admin.deleteQueue(queue);
            admin.deleteQueue(queue + ".dlq");
            db.getCollection(collection).drop();
        }
        double done = to[0] - from[0];
        return new Run(done / ((to[1] - from[1]) / 1e9), (to[2] - from[2]) / done, (to[3] - from[3]) / 1e3 / done,
                (to[4] - from[4]) / 1e3 / done);
    }

    /**
     * Waits for {@code atLeast} outcomes, then records {messages, nanoTime, commands, consumer thread CPU ns, client
     * CPU ns}.
     */
    private void sample(double[] into, SimpleMeterRegistry meters, String threads, int atLeast) {
        Awaitility.await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(2))
                .until(() -> outcomes(meters) >= atLeast);
        into[0] = outcomes(meters);
        into[1] = System.nanoTime();
        into[2] = commands.sum();
        into[3] = cpu(threads);
        into[4] = clientCpu();
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

    /**
     * CPU time of every live Java thread but the embedded MongoDB server's and Awaitility's poller (which samples):
     * what the client side spent.
     */
    static long clientCpu() {
        long total = 0;
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (!thread.getName().startsWith("mongo-server-") && !thread.getName().startsWith("awaitility")) {
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
