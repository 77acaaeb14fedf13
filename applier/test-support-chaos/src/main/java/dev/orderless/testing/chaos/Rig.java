package dev.orderless.testing.chaos;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.connection.ClusterConnectionMode;
import dev.orderless.broker.QueueTopology;
import dev.orderless.testing.TcpProxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The backends of one chaos run: direct connections for publishing and checking, a database and queues of its
 * own (dropped and deleted on close), and the consumers' slots, each behind proxies of its own.
 */
final class Rig implements AutoCloseable {
    private final ConnectionString mongo;
    private final URI rabbit;
    final MongoClient client;
    final MongoDatabase database;
    final CachingConnectionFactory direct;
    final String collection;
    final String queue;
    private final List<String> queues = new ArrayList<>();
    private final List<Slot> slots = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closing = new java.util.concurrent.CopyOnWriteArrayList<>();

    Rig(String mongoConnectionString, URI rabbitUri, String collection) {
        this.mongo = new ConnectionString(mongoConnectionString);
        this.rabbit = rabbitUri;
        this.collection = collection;
        String run = UUID.randomUUID().toString().substring(0, 8);
        this.client = MongoClients.create(mongo);
        this.database = client.getDatabase("chaos_" + run);
        this.direct = connectionFactory(rabbit.getHost(), port(rabbit));
        this.direct.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        this.direct.setPublisherReturns(true);
        try {
            this.queue = declare(collection + ".chaos-" + run);
        } catch (RuntimeException e) {   // the broker did not answer: nothing of the run stays behind
            direct.destroy();
            client.close();
            throw e;
        }
    }

    /** Declares {@code name} and its dead-letter queue {@code name + ".dlq"}; deleted on close. */
    String declare(String name) {
        QueueTopology.declare(direct, name, name + ".dlq");
        queues.add(name);
        return name;
    }

    /**
     * Publishes {@code bodies} to {@code to} in order, each confirmed by the broker and routed.
     *
     * @throws IllegalStateException one line naming the broker, the message and the cause, if the broker did not take
     *                               one (it stopped, or cut the connection, during the publish)
     */
    void publish(String to, List<byte[]> bodies) {
        try {
            dev.orderless.testing.rabbit.ConfirmedPublisher.publishAll(direct, to, bodies);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("chaos run: interrupted while publishing to '" + to + "'", e);
        } catch (IllegalStateException e) {
            throw new IllegalStateException("chaos run: publishing its messages: " + e.getMessage(), e);
        }
    }

    /** Messages ready in {@code name} (not those a consumer holds). */
    long ready(String name) {
        Properties properties = new RabbitAdmin(direct).getQueueProperties(name);
        Object count = properties == null ? null : properties.get(RabbitAdmin.QUEUE_MESSAGE_COUNT);
        return count instanceof Number n ? n.longValue() : 0;
    }

    /** Closes {@code resource} with the run, whatever fails. */
    void closing(AutoCloseable resource) {
        closing.add(resource);
    }

    /** A consumer of the team's, started by {@code factory} behind proxies of its own. */
    Slot start(ConsumerFactory factory, String from, int concurrency) {
        TcpProxy rabbitProxy = TcpProxy.start(rabbit.getHost(), port(rabbit));
        ServerAddress target = new ServerAddress(mongo.getHosts().get(0));
        TcpProxy mongoProxy = TcpProxy.start(target.getHost(), target.getPort());
        CachingConnectionFactory cf = connectionFactory("127.0.0.1", rabbitProxy.port());
        MongoClient proxied = MongoClients.create(MongoClientSettings.builder().applyConnectionString(mongo)
                .applyToClusterSettings(cluster -> cluster.hosts(List.of(new ServerAddress("127.0.0.1",
                        mongoProxy.port()))).mode(ClusterConnectionMode.SINGLE).serverSelectionTimeout(30,
                        TimeUnit.SECONDS))
                .build());
        try {
            AutoCloseable consumer = factory.start(new ChaosContext(cf, proxied.getDatabase(database.getName()),
                    collection, from, concurrency));
            Slot slot = new Slot(rabbitProxy, mongoProxy, cf, proxied, consumer);
            slots.add(slot);
            return slot;
        } catch (Exception e) {
            cf.destroy();
            proxied.close();
            rabbitProxy.close();
            mongoProxy.close();
            throw new IllegalStateException("the consumer factory failed to start a consumer: " + e, e);
        }
    }

    private CachingConnectionFactory connectionFactory(String host, int port) {
        CachingConnectionFactory cf = new CachingConnectionFactory(rabbit);
        cf.setHost(host);
        cf.setPort(port);
        return cf;
    }

    private static int port(URI uri) {
        return uri.getPort() < 0 ? 5672 : uri.getPort();
    }

    static String text(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        slots.forEach(Slot::close);   // whatever a failure left running (closing twice is harmless)
        for (AutoCloseable other : closing) {
            try {
                other.close();
            } catch (Exception e) {
                // stopping what the run started; nothing depends on it after the run
            }
        }
        try {
            RabbitAdmin admin = new RabbitAdmin(direct);
            for (String name : queues) {
                admin.deleteQueue(name);
                admin.deleteQueue(name + ".dlq");
            }
        } catch (org.springframework.amqp.AmqpException brokerGone) {
            // a broker that stopped during the run keeps its queues; the run's failure already says why
        } finally {
            direct.destroy();
            try {
                database.drop();
            } finally {
                client.close();
            }
        }
    }

    /** One consumer, behind its own proxies. */
    static final class Slot implements AutoCloseable {
        private final TcpProxy rabbitProxy;
        private final TcpProxy mongoProxy;
        private final CachingConnectionFactory cf;
        private final MongoClient client;
        private final AutoCloseable consumer;

        Slot(TcpProxy rabbitProxy, TcpProxy mongoProxy, CachingConnectionFactory cf, MongoClient client,
             AutoCloseable consumer) {
            this.rabbitProxy = rabbitProxy;
            this.mongoProxy = mongoProxy;
            this.cf = cf;
            this.client = client;
            this.consumer = consumer;
        }

        void cutBroker() {
            rabbitProxy.cut();
        }

        void cutMongo() {
            mongoProxy.cut();
        }

        void restore() {
            rabbitProxy.restore();
            mongoProxy.restore();
        }

        /** As a process dies: its connections cut first, so nothing it held is acked; then closed, not waited for. */
        void kill() {
            rabbitProxy.cut();
            mongoProxy.cut();
            Thread closing = new Thread(this::close, "chaos-killed-consumer");
            closing.setDaemon(true);
            closing.start();
        }

        private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

        @Override
        public void close() {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            try {
                consumer.close();
            } catch (Exception e) {
                // a killed consumer's connections are gone: closing it may fail, and nothing depends on it
            }
            cf.destroy();
            client.close();
            rabbitProxy.close();
            mongoProxy.close();
        }
    }
}
