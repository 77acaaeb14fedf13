package dev.orderless.publish.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A web application and its consumer, wired by properties alone: the {@link StampingPublisher} bean on
 * Boot's template settings, the consumer on Boot's container factory, and one trace from each publish to
 * its apply. The trace is carried the way a tracing bridge carries it: a handler writes a context into
 * the message's headers when the publish is observed, and reads it back when the consume is. On the
 * embedded broker, or the real RabbitMQ when {@code RABBITMQ_URI} is set (as in CI).
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@DirtiesContext
@SpringBootTest(classes = PublisherBootTest.App.class, properties = {"spring.main.banner-mode=off",
        "spring.rabbitmq.publisher-confirm-type=correlated", "spring.rabbitmq.publisher-returns=true",
        "orderless.collection=students", "orderless.consumer.batch-size=10", "orderless.consumer.concurrency=3",
        // Boot's factory sets a maximum below the consumers: the consumer's own number still holds
        "spring.rabbitmq.listener.simple.max-concurrency=1"})
class PublisherBootTest {
    private static final String QUEUE = RabbitExtension.uniqueQueue("boot-publish");
    private static final String DATABASE = MongoBackend.freshDatabaseName("boot_publish");
    private static final String TRACE = "x-test-trace";
    private static RabbitBackend rabbit;
    private static MongoBackend mongo;

    @BeforeAll
    static void backends(RabbitBackend rabbitBackend, MongoBackend mongoBackend) {
        rabbit = rabbitBackend;
        mongo = mongoBackend;
    }

    @DynamicPropertySource
    static void connections(DynamicPropertyRegistry registry) {
        dev.orderless.boot.BootRabbit.properties(registry, () -> rabbit);
        registry.add("orderless.database", () -> DATABASE);
        registry.add("orderless.consumer.queue", () -> QUEUE);
    }

    /** Trace ids as a tracing bridge would propagate them: put in the headers on send, read on receive. */
    static final class Propagation implements ObservationHandler<Observation.Context> {
        final Map<String, String> sentTo = new ConcurrentHashMap<>();       // trace -> "entity@seq" published
        final Map<String, String> received = new ConcurrentHashMap<>();     // "entity@seq" consumed -> trace

        @Override
        @SuppressWarnings("unchecked")
        public void onStart(Observation.Context context) {
            if (context instanceof SenderContext<?> sending) {
                String trace = UUID.randomUUID().toString();
                ((SenderContext<Object>) sending).getSetter().set(sending.getCarrier(), TRACE, trace);
                context.put(TRACE, trace);
            } else if (context instanceof ReceiverContext<?> receiving) {
                String trace = ((ReceiverContext<Object>) receiving).getGetter().get(receiving.getCarrier(), TRACE);
                context.put(TRACE, trace == null ? "none" : trace);
            }
        }

        @Override
        public void onStop(Observation.Context context) {
            String trace = context.get(TRACE);
            String op = value(context, "orderless.entity") + "@" + value(context, "orderless.seq");
            if (trace != null && context instanceof SenderContext<?>) {
                sentTo.put(trace, op);
            } else if (trace != null && context instanceof ReceiverContext<?>) {
                received.put(op, trace);
            }
        }

        private static String value(Observation.Context context, String key) {
            var value = context.getHighCardinalityKeyValue(key);
            return value == null ? "?" : value.getValue();
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        static final AtomicInteger customized = new AtomicInteger();
        static final AtomicReference<SimpleMessageListenerContainer> container = new AtomicReference<>();

        @Bean(destroyMethod = "close")
        MongoClient mongoClient() {
            return mongo.newClient();
        }

        @Bean
        CollectionSchema schema() {
            return CollectionSchema.builder().set(SetField.of("classes", "name")).register("name").build();
        }

        @Bean
        Propagation propagation() {
            return new Propagation();
        }

        @Bean
        TestObservationRegistry observationRegistry(Propagation propagation) {
            TestObservationRegistry registry = TestObservationRegistry.create();
            registry.observationConfig().observationHandler(propagation);
            return registry;
        }

        /** Boot's container factory applies customizers: this one proves the consumer's container came from it. */
        @Bean
        ContainerCustomizer<SimpleMessageListenerContainer> containerCustomizer() {
            return made -> {
                customized.incrementAndGet();
                container.set(made);
            };
        }
    }

    @Autowired
    private StampingPublisher publisher;
    @Autowired
    private MongoClient client;
    @Autowired
    private Propagation propagation;
    @Autowired
    private TestObservationRegistry observations;

    @Test
    void a_trace_crosses_from_each_publish_to_its_apply() {
        Map<String, Set<String>> expected = new TreeMap<>();
        for (int i = 0; i < 60; i++) {
            String student = "s" + (i % 6);
            String course = "C" + i;
            publisher.publish(student, seq -> Operation.add(student, seq, "classes", course));
            expected.computeIfAbsent(student, s -> new TreeSet<>()).add(course);
        }

        MongoCollection<BsonDocument> students = client.getDatabase(DATABASE).getCollection("students", BsonDocument.class);
        Awaitility.await("every publish applied").atMost(Duration.ofMinutes(1)).until(() -> classes(students).equals(expected));
        Awaitility.await("every consume observed").atMost(Duration.ofSeconds(30))
                .until(() -> propagation.received.size() == 60);

        assertThat(propagation.sentTo).hasSize(60);
        propagation.received.forEach((op, trace) ->
                assertThat(propagation.sentTo.get(trace)).as("the publish whose trace %s reached %s", trace, op).isEqualTo(op));
        assertThat(observations).hasObservationWithNameEqualTo("orderless.consume").that()
                .hasLowCardinalityKeyValue("orderless.queue", QUEUE)
                .hasLowCardinalityKeyValue("orderless.outcome", "applied");
        assertThat(observations).hasObservationWithNameEqualTo("orderless.apply").that()
                .hasLowCardinalityKeyValue("orderless.queue", QUEUE);
        assertThat(App.customized).as("the consumer's container came from Boot's container factory").hasPositiveValue();
        assertThat(App.container.get().getActiveConsumerCount()).as("orderless.consumer.concurrency").isEqualTo(3);
    }

    private static Map<String, Set<String>> classes(MongoCollection<BsonDocument> students) {
        Map<String, Set<String>> classes = new TreeMap<>();
        EntityState.readAll(students.find(), CollectionSchema.builder().set(SetField.of("classes", "name")).register("name")
                .build()).values().forEach(e -> classes.put(e.entity(),
                new TreeSet<>(e.live().getOrDefault("classes", Map.of()).keySet())));
        return classes;
    }
}
