package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import com.mongodb.client.MongoClient;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationFilter;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.invoke.convert.ConversionServiceParameterValueMapper;
import org.springframework.boot.actuate.endpoint.web.EndpointMediaTypes;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.WebEndpointHttpMethod;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.WebOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpointDiscoverer;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What an operator does with dead letters in an application wired by properties, through the Actuator
 * endpoint as Actuator's web layer calls it (discovered, request parameters mapped by name): look at them
 * by reason, replay one reason, park another, purge. On the embedded broker, or the real RabbitMQ when
 * {@code RABBITMQ_URI} is set (as in CI).
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@DirtiesContext
@SpringBootTest(classes = DeadLettersBootTest.App.class, properties = {"spring.main.banner-mode=off",
        "orderless.collection=entities", "orderless.consumer.concurrency=1"})
class DeadLettersBootTest {
    private static final String QUEUE = RabbitExtension.uniqueQueue("boot-dlq");
    private static final String DATABASE = MongoBackend.freshDatabaseName("boot_dlq");
    private static RabbitBackend rabbit;
    private static MongoBackend mongo;
    private static ConnectionFactory publishing;

    @BeforeAll
    static void backends(RabbitBackend rabbitBackend, MongoBackend mongoBackend, ConnectionFactory confirming) {
        rabbit = rabbitBackend;
        mongo = mongoBackend;
        publishing = confirming;
    }

    @AfterAll
    static void parkingQueueGoes() {
        new RabbitAdmin(publishing).deleteQueue(QueueTopology.parkingQueue(QUEUE + ".dlq"));
    }

    @DynamicPropertySource
    static void connections(DynamicPropertyRegistry registry) {
        dev.orderless.boot.BootRabbit.properties(registry, () -> rabbit);
        registry.add("orderless.database", () -> DATABASE);
        registry.add("orderless.consumer.queue", () -> QUEUE);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean(destroyMethod = "close")
        MongoClient mongoClient() {
            return mongo.newClient();
        }

        @Bean
        CollectionSchema schema() {
            return Histories.SCHEMA;
        }
    }

    @Autowired
    private ApplicationContext context;
    @Autowired
    private OrderlessConsumer consumer;

    @Test
    void letters_are_listed_replayed_parked_and_purged_by_reason_through_actuator() throws Exception {
        List<byte[]> bodies = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            bodies.add(("not json " + i).getBytes(StandardCharsets.UTF_8));
        }
        for (int i = 0; i < 2; i++) {   // past the default limit of 512 KiB
            bodies.add(("{\"entity\":\"e" + i + "\",\"pad\":\"" + "x".repeat(600 * 1024) + "\"}").getBytes(StandardCharsets.UTF_8));
        }
        ConfirmedPublisher.publishAll(publishing, QUEUE, bodies);
        Awaitility.await("five dead letters").atMost(Duration.ofSeconds(30))
                .until(() -> deadLetters() == 5);
        ExposableWebEndpoint endpoint = endpoint(Access.UNRESTRICTED);

        assertThat(kinds(invoke(endpoint, WebEndpointHttpMethod.GET, Map.of()))).containsExactly(tuple("bad_input", 3L),
                tuple("oversized", 2L));

        assertThat(invoke(endpoint, WebEndpointHttpMethod.POST, Map.of("action", "replay", "kind", "bad_input")))
                .containsEntry("replayed", 3L);
        // the consumer takes them again and, still bad, dead-letters them again, counted as replayed once
        Awaitility.await("the replayed letters come back").atMost(Duration.ofSeconds(30))
                .until(() -> deadLetters() == 5);

        assertThat(invoke(endpoint, WebEndpointHttpMethod.POST, Map.of("action", "park", "kind", "bad_input")))
                .containsEntry("parked", 3L);
        assertThat(invoke(endpoint, WebEndpointHttpMethod.DELETE, Map.of("kind", "oversized")))
                .containsEntry("purged", 2L);

        Awaitility.await("the dead-letter queue is empty").atMost(Duration.ofSeconds(30))
                .until(() -> deadLetters() == 0);
        Awaitility.await("the consumer's health figure follows").atMost(Duration.ofSeconds(30))
                .until(() -> consumer.deadLetterDepth().orElse(-1) == 0);
        Map<String, Object> view = invoke(endpoint, WebEndpointHttpMethod.GET, Map.of());
        assertThat(kinds(view)).isEmpty();
        @SuppressWarnings("unchecked")
        List<DeadLetterQueue.Group> parked = (List<DeadLetterQueue.Group>) view.get("parked");
        assertThat(DeadLetterQueue.byKind(parked)).containsExactly(Map.entry("bad_input", 3L));
        RabbitTemplate template = new RabbitTemplate(publishing);
        for (int i = 0; i < 3; i++) {
            Message letter = template.receive(QueueTopology.parkingQueue(QUEUE + ".dlq"), 5000);
            assertThat(letter).isNotNull();
            assertThat(letter.getMessageProperties().getHeaders()).containsEntry("x-orderless-replay-count", 1);
        }
    }

    @Test
    void exposed_with_its_default_access_the_endpoint_only_reads() {
        assertThat(endpoint(Access.READ_ONLY).getOperations()).extracting(o -> o.getRequestPredicate().getHttpMethod())
                .containsExactly(WebEndpointHttpMethod.GET);
    }

    @Test
    void a_purge_without_kind_or_max_and_an_unknown_kind_are_refused_with_what_to_give() {
        ExposableWebEndpoint endpoint = endpoint(Access.UNRESTRICTED);

        WebEndpointResponse<Map<String, Object>> bare = response(endpoint, WebEndpointHttpMethod.DELETE, Map.of());
        assertThat(bare.getStatus()).isEqualTo(400);
        assertThat(String.valueOf(bare.getBody().get("error"))).contains("give a kind, or max");
        WebEndpointResponse<Map<String, Object>> misspelt = response(endpoint, WebEndpointHttpMethod.POST,
                Map.of("action", "replay", "kind", "bad-input"));
        assertThat(misspelt.getStatus()).isEqualTo(400);
        assertThat(misspelt.getBody()).containsEntry("error", "unknown kind 'bad-input'");
        assertThat(misspelt.getBody().get("kinds")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST).contains("bad_input", "unsupported_envelope");
    }

    /**
     * The endpoint as Actuator's web layer sees it: discovered from the context, its operations mapped by
     * parameter name, with {@code access} as its configured access (the default one is its own).
     */
    private ExposableWebEndpoint endpoint(Access access) {
        WebEndpointDiscoverer discoverer = new WebEndpointDiscoverer(context, new ConversionServiceParameterValueMapper(),
                EndpointMediaTypes.DEFAULT, List.of(), List.of(), List.of(), List.of(),
                List.of(OperationFilter.byAccess((id, defaultAccess) -> access == Access.READ_ONLY ? defaultAccess : access)));
        return discoverer.getEndpoints().stream().filter(e -> e.getEndpointId().toString().equals("orderlessdeadletters"))
                .findFirst().orElseThrow();
    }

    /** Read now, not the health's figure (that one is refreshed in the background, at most every few seconds). */
    private static long deadLetters() {
        var info = new RabbitAdmin(publishing).getQueueInfo(QUEUE + ".dlq");
        return info == null ? -1 : info.getMessageCount();
    }

    private static Map<String, Object> invoke(ExposableWebEndpoint endpoint, WebEndpointHttpMethod method,
                                              Map<String, Object> arguments) {
        WebEndpointResponse<Map<String, Object>> response = response(endpoint, method, arguments);
        assertThat(response.getStatus()).as("answered " + response.getBody()).isEqualTo(200);
        return response.getBody();
    }

    @SuppressWarnings("unchecked")
    private static WebEndpointResponse<Map<String, Object>> response(ExposableWebEndpoint endpoint,
                                                                     WebEndpointHttpMethod method,
                                                                     Map<String, Object> arguments) {
        WebOperation operation = endpoint.getOperations().stream()
                .filter(o -> o.getRequestPredicate().getHttpMethod() == method).findFirst().orElseThrow();
        return (WebEndpointResponse<Map<String, Object>>) operation.invoke(
                new InvocationContext(SecurityContext.NONE, arguments));
    }

    @SuppressWarnings("unchecked")
    private static List<org.assertj.core.groups.Tuple> kinds(Map<String, Object> view) {
        return ((Map<String, Long>) view.get("kinds")).entrySet().stream()
                .map(k -> tuple(k.getKey(), k.getValue())).toList();
    }
}
