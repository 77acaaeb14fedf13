package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.broker.QueueTopology;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * One consumer set-up for the end-to-end tests: a fresh queue pair declared with {@link QueueTopology},
 * a fresh collection, an applier, counters, and helpers to publish, wait and compare with the oracle.
 */
final class ConsumerFixture implements AutoCloseable {
    final ConnectionFactory connectionFactory;
    final String queue;
    final String deadLetterQueue;
    final MongoCollection<BsonDocument> collection;
    final GuardedApplier applier;
    final CollectionSchema schema;
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final QueueTopology.Declared topology;
    private final List<OperationConsumer> consumers = new ArrayList<>();
    private final Envelope envelope = new Envelope();

    ConsumerFixture(ConnectionFactory connectionFactory, MongoDatabase db, String name) {
        this(connectionFactory, db.getCollection("entities", BsonDocument.class), name);
    }

    ConsumerFixture(ConnectionFactory connectionFactory, MongoCollection<BsonDocument> collection, String name) {
        this(connectionFactory, collection, name, Histories.SCHEMA);
    }

    /** A fixture whose entities have {@code schema} (e.g. {@link Histories#ALL_TYPES}). */
    ConsumerFixture(ConnectionFactory connectionFactory, MongoDatabase db, String name, CollectionSchema schema) {
        this(connectionFactory, db.getCollection("entities", BsonDocument.class), name, schema);
    }

    ConsumerFixture(ConnectionFactory connectionFactory, MongoCollection<BsonDocument> collection, String name,
                    CollectionSchema schema) {
        this.schema = schema;
        this.connectionFactory = connectionFactory;
        this.queue = RabbitExtension.uniqueQueue(name);
        this.deadLetterQueue = queue + ".dlq";
        this.collection = collection;
        this.applier = GuardedApplier.create(collection, schema);
        this.topology = QueueTopology.declare(connectionFactory, queue, deadLetterQueue);
    }

    ConsumerOptions options(int consumers) {
        return ConsumerOptions.ofDefaults(queue).withConcurrency(consumers)
                .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500)));
    }

    OperationConsumer start(ConsumerOptions options) {
        return start(applier, options);
    }

    OperationConsumer start(GuardedApplier applier, ConsumerOptions options) {
        return start(OperationConsumer.builder(connectionFactory, applier).options(options));
    }

    /** Starts what {@code builder} says, with this fixture's meters. */
    OperationConsumer start(OperationConsumer.Builder builder) {
        OperationConsumer consumer = builder.meters(meters).start();
        consumers.add(consumer);
        return consumer;
    }

    void publish(List<Operation> ops) throws Exception {
        List<byte[]> bodies = new ArrayList<>();
        ops.forEach(op -> bodies.add(envelope.encode(op)));
        ConfirmedPublisher.publishAll(connectionFactory, queue, bodies);
    }

    void publishRaw(List<byte[]> bodies) throws Exception {
        ConfirmedPublisher.publishAll(connectionFactory, queue, bodies);
    }

    double acked() {
        double sum = 0;
        for (Outcome outcome : Outcome.values()) {
            sum += count("orderless.consume.outcomes", "outcome", outcome.tag());
        }
        return sum;
    }

    double deadLettered() {
        return meters.get("orderless.consume.dead_lettered").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    double retried() {
        return meters.get("orderless.consume.retried").counter().count();
    }

    double count(String name, String tag, String value) {
        return meters.get(name).tag(tag, value).counter().count();
    }

    /** Waits until {@code expected} deliveries were acked or dead-lettered (bounded). */
    void awaitHandled(long expected, Duration atMost) {
        Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(100))
                .until(() -> acked() + deadLettered() >= expected);
    }

    long messagesIn(String queueName) {
        var info = new RabbitAdmin(connectionFactory).getQueueInfo(queueName);
        return info == null ? -1 : info.getMessageCount();
    }

    /** The queue's ready count reaches 0 (bounded: a quorum queue's count can trail the acks a moment). */
    void awaitEmpty(String queueName) {
        Awaitility.await(queueName + " empty").atMost(Duration.ofSeconds(30)).until(() -> messagesIn(queueName) == 0);
    }

    /**
     * Takes everything in the dead-letter queue: body to reason header, in arrival order. Each letter also
     * carries Spring's recoverer headers: the same reason, and where it was published (the default
     * exchange, the work queue).
     */
    Map<String, String> drainDeadLetters() {
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        Map<String, String> reasons = new LinkedHashMap<>();
        for (Message m = template.receive(deadLetterQueue, 2000); m != null; m = template.receive(deadLetterQueue, 500)) {
            Map<String, Object> headers = m.getMessageProperties().getHeaders();
            reasons.put(Envelope.toString(m.getBody()), String.valueOf(headers.get(DeadLetterFields.REASON)));
            assertThat(headers).containsEntry("x-exception-message", headers.get(DeadLetterFields.REASON))
                    .containsEntry("x-original-exchange", "").containsEntry("x-original-routingKey", queue);
        }
        return reasons;
    }

    void assertConverged(List<Operation> history) {
        Map<String, EntityState> expected = new ReferenceModel(schema).replay(history);
        Map<String, EntityState> stored = EntityState.readAll(collection.find(), schema);
        assertThat(stored.keySet()).isEqualTo(expected.keySet());
        assertThat(ReferenceModel.diverged(expected, stored)).as("diverged documents").isEmpty();
        assertThat(stored).isEqualTo(expected);
    }

    @Override
    public void close() {
        consumers.forEach(OperationConsumer::close);
        RabbitAdmin admin = new RabbitAdmin(connectionFactory);
        admin.deleteQueue(queue);
        admin.deleteQueue(deadLetterQueue);
    }
}
