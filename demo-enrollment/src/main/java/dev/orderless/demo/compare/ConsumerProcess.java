package dev.orderless.demo.compare;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.testing.TcpProxy;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * One consumer process of a trial, in this JVM: its own connection to the broker (through a proxy, so that
 * killing it is what the broker sees of a SIGKILL: the socket closes) and its own MongoDB client. What it
 * runs (containers, an orderless consumer) is handed to it to close.
 */
final class ConsumerProcess implements AutoCloseable {
    final int id;
    final CachingConnectionFactory broker;
    final MongoClient mongo;
    private final TcpProxy toBroker;
    private final List<AutoCloseable> running = new ArrayList<>();
    private volatile boolean killed;

    ConsumerProcess(int id, URI rabbit, String mongoUri) {
        this.id = id;
        this.toBroker = TcpProxy.start(rabbit.getHost(), rabbit.getPort() < 0 ? 5672 : rabbit.getPort());
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        try {
            factory.setUri(rabbit);
        } catch (Exception e) {
            throw new IllegalArgumentException("not an AMQP URI: " + rabbit, e);
        }
        factory.setHost("127.0.0.1");
        factory.setPort(toBroker.port());
        factory.setAutomaticRecoveryEnabled(false);
        this.broker = new CachingConnectionFactory(factory);
        this.mongo = MongoClients.create(new ConnectionString(mongoUri));
    }

    void runs(AutoCloseable consumer) {
        running.add(consumer);
    }

    boolean killed() {
        return killed;
    }

    /** Dies at once: the broker sees its connection close and requeues what it held; it never comes back. */
    void kill() {
        killed = true;
        toBroker.cut();
    }

    @Override
    public void close() {
        for (AutoCloseable consumer : running) {
            try {
                consumer.close();
            } catch (Exception e) {
                // a killed process's consumers fail to close cleanly: nothing of theirs is left to save
            }
        }
        broker.destroy();
        mongo.close();
        toBroker.close();
    }
}
