package dev.orderless.kafka;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.MongoBackend;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.kafka.KafkaBroker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;

/**
 * One test's world on a real broker: the embedded MongoDB behind a proxy that can cut it, a collection of
 * {@link Histories#ALL_TYPES} entities, topics of the test's own, and every consumer and publisher it started, closed
 * with it.
 */
final class ShareGroupFixture implements AutoCloseable {
    private static final AtomicInteger NAMES = new AtomicInteger();

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final TcpProxy proxy;
    final MongoCollection<BsonDocument> collection;
    final GuardedApplier applier;
    private final KafkaBroker broker;
    private final MongoClient client;
    private final List<AutoCloseable> opened = new ArrayList<>();

    ShareGroupFixture(KafkaBroker broker, MongoBackend backend, MongoDatabase fresh) {
        this.broker = broker;
        String[] target = new ConnectionString(backend.connectionString()).getHosts().get(0).split(":");
        proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
        client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port()
                + "/?directConnection=true&serverSelectionTimeoutMS=1000&connectTimeoutMS=1000&socketTimeoutMS=3000");
        collection = client.getDatabase(fresh.getName()).getCollection("entities", BsonDocument.class);
        applier = GuardedApplier.create(collection, Histories.ALL_TYPES);
    }

    Map<String, Object> kafka() {
        return Map.of("bootstrap.servers", broker.bootstrapServers());
    }

    /** A topic of its own (and its dead-letter topic and group), declared, with short back-offs. */
    ShareConsumerOptions declared(String name, int partitions) {
        String topic = "orderless.test." + name + "." + NAMES.incrementAndGet();
        ShareConsumerOptions options = ShareConsumerOptions.ofDefaults(topic, topic + ".group")
                .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500)));
        KafkaTopology.declare(kafka(), options, partitions);
        return options;
    }

    KafkaOperationPublisher publisher(ShareConsumerOptions options) {
        KafkaOperationPublisher publisher = KafkaOperationPublisher.start(kafka(), options.topic());
        opened.add(publisher);
        return publisher;
    }

    ShareGroupConsumer start(ShareConsumerOptions options) {
        ShareGroupConsumer consumer = ShareGroupConsumer.builder(kafka(), applier).options(options).meters(meters).start();
        opened.add(0, consumer);
        return consumer;
    }

    /** Records accepted: applied, or found stale. */
    double accepted() {
        return meters.find("orderless.consume.outcomes").counters().stream().mapToDouble(Counter::count).sum();
    }

    double deadLettered() {
        return meters.find("orderless.consume.dead_lettered").counters().stream().mapToDouble(Counter::count).sum();
    }

    void awaitSettled(int records) {
        Awaitility.await().atMost(Duration.ofMinutes(2)).until(() -> accepted() + deadLettered() >= records);
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        client.close();
        proxy.close();
    }
}
