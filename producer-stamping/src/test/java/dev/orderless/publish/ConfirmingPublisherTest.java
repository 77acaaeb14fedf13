package dev.orderless.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.stamp.HybridLogicalClock;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.stamp.Stamper;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConfirmingPublisherTest {
    private static final CollectionSchema STUDENTS = CollectionSchema.builder()
            .set(SetField.of("classes", "name")).register("name").build();

    @Test
    void every_stamped_operation_is_confirmed_and_arrives_as_a_canonical_envelope(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("publish");
        // not auto-delete: Qpid deletes such a queue as soon as the declaring channel closes
        new RabbitAdmin(cf).declareQueue(new org.springframework.amqp.core.Queue(queue, true, false, false));
        StampingPublisher publisher = new StampingPublisher(HybridLogicalClock.create(1),
                ConfirmingPublisher.toQueue(cf, queue, PublisherOptions.ofDefaults().withWindow(100)));
        List<Operation> sent = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            String student = "s" + (i % 20);
            sent.add(publisher.publish(student, seq -> Operation.add(student, seq, "classes", "C" + seq % 7)));
        }

        List<Operation> received = new ArrayList<>();
        RabbitTemplate template = new RabbitTemplate(cf);
        Envelope envelope = new Envelope();
        for (Message m = template.receive(queue, 2000); m != null; m = template.receive(queue, 500)) {
            assertThat(m.getMessageProperties().getContentType()).isEqualTo("application/json");
            received.add(envelope.decode(m.getBody()));
        }
        assertThat(received).containsExactlyInAnyOrderElementsOf(sent);
        new RabbitAdmin(cf).deleteQueue(queue);
    }

    @Test
    void an_operation_the_broker_cannot_route_is_reported_with_the_reason_and_not_dropped(ConnectionFactory cf,
                                                                                          RabbitBackend rabbit) {
        ConfirmingPublisher publisher = ConfirmingPublisher.toQueue(cf, RabbitExtension.uniqueQueue("nowhere"),
                PublisherOptions.ofDefaults().withMaxAttempts(2).withBackoff(Backoff.fixed(Duration.ofMillis(10))));
        Operation op = Operation.delete("s1", 1);

        assertThatThrownBy(() -> publisher.publish(op))
                .isInstanceOfSatisfying(PublishFailedException.class, e -> assertThat(e.failed()).containsExactly(op))
                .hasMessageContaining("not taken by the broker after 2 attempts")
                // RabbitMQ returns the message (and acks the publish); Qpid nacks the publish
                .hasMessageContaining(rabbit.isRabbitMq() ? "returned: NO_ROUTE (312)" : "nacked by the broker");
    }

    @Test
    void a_tracing_handler_that_fails_does_not_stop_publishing(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("untraced");
        new RabbitAdmin(cf).declareQueue(new org.springframework.amqp.core.Queue(queue, true, false, false));
        io.micrometer.observation.ObservationRegistry failing = io.micrometer.observation.ObservationRegistry.create();
        failing.observationConfig().observationHandler(new io.micrometer.observation.ObservationHandler<>() {
            @Override
            public void onStart(io.micrometer.observation.Observation.Context context) {
                throw new IllegalStateException("exporter unreachable");
            }

            @Override
            public boolean supportsContext(io.micrometer.observation.Observation.Context context) {
                return true;
            }
        });
        ConfirmingPublisher publisher = ConfirmingPublisher.toQueue(cf, queue,
                PublisherOptions.ofDefaults().withObservations(failing));

        publisher.publishAll(List.of(Operation.delete("s1", 1), Operation.delete("s2", 1)));

        assertThat(new RabbitAdmin(cf).getQueueInfo(queue).getMessageCount()).as("sent untraced").isEqualTo(2);
        new RabbitAdmin(cf).deleteQueue(queue);
    }

    @Test
    void a_connection_factory_without_confirms_is_refused_at_start_up(RabbitBackend rabbit) {
        CachingConnectionFactory plain = new CachingConnectionFactory(rabbit.uri());
        try {
            assertThatThrownBy(() -> ConfirmingPublisher.toQueue(plain, "q", PublisherOptions.ofDefaults()))
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("setPublisherConfirmType(ConfirmType.CORRELATED)");
        } finally {
            plain.destroy();
        }
    }

    @Test
    void four_web_threads_stamp_and_publish_while_four_consumers_apply_and_the_documents_match_the_oracle(
            ConnectionFactory cf, MongoDatabase db) throws Exception {
        String queue = RabbitExtension.uniqueQueue("stamped");
        QueueTopology.declare(cf, queue, queue + ".dlq");
        Stamper stamper = MongoCounterStamper.create(db.getCollection("seq_counters", BsonDocument.class));
        StampingPublisher publisher = new StampingPublisher(stamper, ConfirmingPublisher.toQueue(cf, queue,
                PublisherOptions.ofDefaults()));
        var students = db.getCollection("students", BsonDocument.class);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        List<Operation> published = Collections.synchronizedList(new ArrayList<>());

        try (OperationConsumer consumer = OperationConsumer.builder(cf, GuardedApplier.create(students, STUDENTS))
                .options(ConsumerOptions.ofDefaults(queue).withConcurrency(4)).meters(meters).start()) {
            ExecutorService web = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> users = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int thread = t;
                    users.add(web.submit(() -> {
                        Random random = new Random(thread);
                        for (int i = 0; i < 150; i++) {
                            String student = "student-" + random.nextInt(30);
                            String course = "C" + random.nextInt(5);
                            int action = random.nextInt(10);
                            published.add(publisher.publish(student, seq -> action < 5
                                    ? Operation.add(student, seq, "classes", course)
                                    : action < 9 ? Operation.remove(student, seq, "classes", course)
                                    : Operation.assign(student, seq, "name", new BsonString("N" + seq))));
                        }
                        return null;
                    }));
                }
                for (Future<?> user : users) {
                    user.get(2, TimeUnit.MINUTES);
                }
            } finally {
                web.shutdownNow();
            }
            Awaitility.await().atMost(Duration.ofMinutes(2)).until(() ->
                    meters.get("orderless.consume.outcomes").counters().stream().mapToDouble(c -> c.count()).sum()
                            >= published.size());
        }

        Map<String, EntityState> expected = new ReferenceModel(STUDENTS).replay(published);
        assertThat(EntityState.readAll(students.find(), STUDENTS)).isEqualTo(expected);
        new RabbitAdmin(cf).deleteQueue(queue);
        new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
    }
}
