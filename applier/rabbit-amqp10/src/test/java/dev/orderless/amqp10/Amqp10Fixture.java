package dev.orderless.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.amqp.Connection;
import dev.orderless.Backoff;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.broker.QueueTopology;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * One AMQP 1.0 consumer set-up: a fresh queue pair declared with {@link QueueTopology} (over AMQP 0-9-1, as an
 * application would), a fresh collection and applier, counters, and helpers to publish over AMQP 1.0, wait, and
 * compare with the oracle.
 */
final class Amqp10Fixture implements AutoCloseable {
    final ConnectionFactory admin;
    final String queue;
    final String deadLetterQueue;
    final MongoCollection<BsonDocument> collection;
    final GuardedApplier applier;
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final List<Amqp10Consumer> consumers = new ArrayList<>();

    Amqp10Fixture(ConnectionFactory admin, MongoDatabase db, String name) {
        this(admin, db.getCollection("entities", BsonDocument.class), name);
    }

    Amqp10Fixture(ConnectionFactory admin, MongoCollection<BsonDocument> collection, String name) {
        this.admin = admin;
        this.queue = RabbitExtension.uniqueQueue(name);
        this.deadLetterQueue = queue + ".dlq";
        this.collection = collection;
        this.applier = GuardedApplier.create(collection, Histories.ALL_TYPES);
        QueueTopology.declare(admin, queue, deadLetterQueue);
    }

    ConsumerOptions options(int consumers) {
        return ConsumerOptions.ofDefaults(queue).withConcurrency(consumers)
                .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500)));
    }

    Amqp10Consumer start(Connection connection, GuardedApplier applier, ConsumerOptions options) {
        Amqp10Consumer consumer = Amqp10Consumer.builder(connection, applier).options(options).meters(meters).start();
        consumers.add(consumer);
        return consumer;
    }

    Amqp10Consumer start(Connection connection, ConsumerOptions options) {
        return start(connection, applier, options);
    }

    void publish(Connection connection, List<Operation> ops) {
        try (Amqp10Publisher publisher = Amqp10Publisher.toQueue(connection, queue, PublisherOptions.ofDefaults())) {
            publisher.publishAll(ops);
        }
    }

    void publishRaw(Connection connection, List<byte[]> bodies) {
        try (Amqp10Publisher publisher = Amqp10Publisher.toQueue(connection, queue, PublisherOptions.ofDefaults())) {
            publisher.publishRaw(bodies);
        }
    }

    double accepted() {
        double sum = 0;
        for (Outcome outcome : Outcome.values()) {
            sum += meters.get("orderless.consume.outcomes").tag("outcome", outcome.tag()).counter().count();
        }
        return sum;
    }

    double deadLettered() {
        return meters.get("orderless.consume.dead_lettered").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    double retried() {
        return meters.get("orderless.consume.retried").counter().count();
    }

    long messagesIn(String queueName) {
        var info = new RabbitAdmin(admin).getQueueInfo(queueName);
        return info == null ? -1 : info.getMessageCount();
    }

    /** Waits (bounded) until {@code queueName} holds {@code count} messages ready. */
    void awaitMessages(String queueName, long count, Duration atMost) {
        Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(100))
                .until(() -> messagesIn(queueName) == count);
    }

    void assertConverged(List<Operation> history) {
        Map<String, EntityState> expected = new ReferenceModel(Histories.ALL_TYPES).replay(history);
        Map<String, EntityState> stored = EntityState.readAll(collection.find(), Histories.ALL_TYPES);
        assertThat(ReferenceModel.diverged(expected, stored)).as("diverged documents").isEmpty();
        assertThat(stored).isEqualTo(expected);
    }

    @Override
    public void close() {
        consumers.forEach(Amqp10Consumer::close);
        RabbitAdmin rabbitAdmin = new RabbitAdmin(admin);
        rabbitAdmin.deleteQueue(queue);
        rabbitAdmin.deleteQueue(deadLetterQueue);
    }
}
