package dev.orderless.demo.compare;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.testing.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One consumer process of a Kafka trial, in this JVM: its own MongoDB client through a proxy of its own (the
 * trial's latency, its round trips counted) and its own Kafka clients, connected to the broker directly (no kill
 * on Kafka: nothing to cut). Everything it runs is started {@link #within} its thread group, so its threads (the
 * poll loops, the Kafka clients' network threads, the MongoDB driver's) are told apart from the rest of the JVM's
 * when its CPU is measured.
 */
final class KafkaConsumerProcess implements AutoCloseable {
    final int id;
    final MongoClient mongo;
    /** Every thread this process starts, and none other. */
    final ThreadGroup threads;
    private final TcpProxy toMongo;
    private final List<AutoCloseable> running = new ArrayList<>();

    /**
     * @param mongoHost  the MongoDB every contestant writes to, as host:port
     * @param latency    added to each of this process's MongoDB round trips
     * @param roundTrips counts every command this process sends to MongoDB
     */
    KafkaConsumerProcess(int id, String mongoHost, Duration latency, AtomicLong roundTrips) {
        this.id = id;
        this.threads = new ThreadGroup("compare-kafka-process-" + id);
        this.toMongo = ConsumerProcess.proxyTo(mongoHost);
        toMongo.latency(latency.dividedBy(2));
        MongoClientSettings settings = ConsumerProcess.counted(toMongo, roundTrips);
        this.mongo = within(() -> MongoClients.create(settings));
    }

    /** Runs {@code work} in a new thread of this process's group and waits for it: what it starts is this process's. */
    <T> T within(Callable<T> work) {
        return CpuMeter.within(threads, work);
    }

    /** Something this process runs, closed with it. */
    void runs(AutoCloseable consumer) {
        running.add(consumer);
    }

    @Override
    public void close() {
        for (AutoCloseable consumer : running) {
            try {
                consumer.close();
            } catch (Exception e) {
                // closing is the trial's end: what a consumer failed to release the next trial's topic does not see
            }
        }
        mongo.close();
        toMongo.close();
    }
}
