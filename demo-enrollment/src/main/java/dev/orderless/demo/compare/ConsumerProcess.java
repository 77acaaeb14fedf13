package dev.orderless.demo.compare;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.orderless.testing.TcpProxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * One consumer process of a trial, in this JVM: its own connection to the broker and its own MongoDB
 * client, each through a proxy of its own, so that killing it is what the broker and MongoDB see of a
 * SIGKILL: both sockets close at once, what it held goes back to the queue, and nothing it had not written
 * yet is written. What it runs (containers, an orderless consumer) is handed to it to close.
 *
 * <p>Its threads are its own: what it runs is started {@link #within} a thread of its {@link #threads} group, so
 * every thread it starts (listener containers, the broker client's, the MongoDB driver's) is in that group or
 * below, and {@link CpuMeter#ofGroups} can measure exactly them. Its proxies' threads are not (they stand for
 * the network), nor is the MongoDB server's.
 */
final class ConsumerProcess implements AutoCloseable {
    final int id;
    final CachingConnectionFactory broker;
    final MongoClient mongo;
    /** Every thread this process starts, and none other (see {@link #within}). */
    final ThreadGroup threads;
    private final TcpProxy toBroker;
    private final TcpProxy toMongo;
    private final List<AutoCloseable> running = new ArrayList<>();
    private volatile boolean killed;
    private Thread closing = new Thread(() -> { });

    /**
     * @param mongoHost  the MongoDB every contestant writes to, as host:port
     * @param latency    added to each of this process's MongoDB round trips
     * @param roundTrips counts every command this process sends to MongoDB
     */
    ConsumerProcess(int id, URI rabbit, String mongoHost, Duration latency, AtomicLong roundTrips) {
        this.id = id;
        this.threads = new ThreadGroup("compare-process-" + id);
        this.toBroker = TcpProxy.start(rabbit.getHost(), rabbit.getPort() < 0 ? 5672 : rabbit.getPort());
        this.toMongo = proxyTo(mongoHost);
        toMongo.latency(latency.dividedBy(2));
        com.rabbitmq.client.ConnectionFactory factory = amqp(rabbit);
        factory.setHost("127.0.0.1");
        factory.setPort(toBroker.port());
        factory.setAutomaticRecoveryEnabled(false);
        // its connection's threads and its consumer work pool: the factory's default would be in the group of
        // the thread that built the factory, not this process's
        factory.setThreadFactory(runnable -> new Thread(threads, runnable));
        this.broker = new CachingConnectionFactory(factory);
        MongoClientSettings settings = counted(toMongo, roundTrips);
        this.mongo = within(() -> MongoClients.create(settings));   // its monitor threads: this process's
    }

    /** A MongoDB client's settings through {@code toMongo}, each command it sends counted in {@code roundTrips}. */
    static MongoClientSettings counted(TcpProxy toMongo, AtomicLong roundTrips) {
        CommandListener counting = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                roundTrips.incrementAndGet();
            }
        };
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString("mongodb://127.0.0.1:" + toMongo.port() + "/?directConnection=true"))
                .addCommandListener(counting)
                .build();
    }

    /**
     * Runs {@code work} in a new thread of this process's group and waits for it: every thread that {@code work}
     * starts (and they in turn) belongs to this process, which is how its CPU is told apart from the rest of the
     * JVM's. A contestant's consumers are started through this, and nothing of theirs needs to know it.
     */
    <T> T within(java.util.concurrent.Callable<T> work) {
        return CpuMeter.within(threads, work);
    }

    /** {@link #within(java.util.concurrent.Callable)} for work that returns nothing. */
    void within(Runnable work) {
        within(() -> {
            work.run();
            return null;
        });
    }

    /** A proxy in this JVM to MongoDB at {@code hostPort} ({@code host} or {@code host:port}). */
    static TcpProxy proxyTo(String hostPort) {
        String[] parts = hostPort.split(":");
        return TcpProxy.start(parts[0], parts.length > 1 ? Integer.parseInt(parts[1]) : 27017);
    }

    /** The RabbitMQ client's factory for {@code uri}: user, password, virtual host, host and port. */
    static com.rabbitmq.client.ConnectionFactory amqp(URI uri) {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        try {
            factory.setUri(uri);
        } catch (Exception e) {
            throw new IllegalArgumentException("not an AMQP URI: " + uri, e);
        }
        return factory;
    }

    void runs(AutoCloseable consumer) {
        running.add(consumer);
    }

    private final List<Runnable> starts = new ArrayList<>();

    /** Something to start by {@link #start()}, not at once. */
    void startsLater(Runnable start) {
        starts.add(start);
    }

    void start() {
        starts.forEach(Runnable::run);
    }

    boolean killed() {
        return killed;
    }

    /** Dies at once: both connections close, what it held goes back to the queue; it never comes back. */
    void kill() {
        toBroker.cut();
        toMongo.cut();
        killed = true;
        closing = new Thread(this::closeConsumers, "compare-killed-" + id);   // what is left of it goes away
        closing.setDaemon(true);
        closing.start();
    }

    private void closeConsumers() {
        for (AutoCloseable consumer : running) {
            try {
                consumer.close();
            } catch (Exception e) {
                // a killed process's consumers fail to close cleanly: nothing of theirs is left to save
            }
        }
    }

    @Override
    public void close() {
        if (killed) {
            try {
                closing.join(Duration.ofMinutes(1).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            closeConsumers();
        }
        broker.destroy();
        mongo.close();
        toBroker.close();
        toMongo.close();
    }
}
