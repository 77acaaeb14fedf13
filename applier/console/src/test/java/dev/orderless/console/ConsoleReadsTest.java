package dev.orderless.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.history.History;
import dev.orderless.history.RecordingApplier;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What the console reads, in an application that lets everyone read, keeps a history and whose broker does not answer:
 * the consumer is shown stopped (started is not consuming), any entity id can be read, an entity's versions and its
 * state as of each seq show its set entries with their attributes, and a bad parameter is refused in one line.
 */
@ExtendWith(MongoExtension.class)
@DirtiesContext
@SpringBootTest(classes = ConsoleReadsTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.banner-mode=off", "orderless.collection=entities", "orderless.console.enabled=true",
                "orderless.consumer.queue=nowhere", "orderless.history.enabled=true"})
class ConsoleReadsTest {
    private static final String DATABASE = MongoBackend.freshDatabaseName("console_reads");
    private static final CollectionSchema ORDERS = CollectionSchema.builder().set(SetField.of("lines", "sku"))
            .register("name").build();
    private static MongoBackend mongo;
    private static int closedPort;

    @BeforeAll
    static void backends(MongoBackend mongoBackend) throws Exception {
        mongo = mongoBackend;
        try (ServerSocket socket = new ServerSocket(0)) {   // a port nothing listens on once closed
            closedPort = socket.getLocalPort();
        }
    }

    @DynamicPropertySource
    static void connections(DynamicPropertyRegistry registry) {
        registry.add("orderless.database", () -> DATABASE);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean(destroyMethod = "close")
        MongoClient mongoClient() {
            return mongo.newClient();
        }

        @Bean(destroyMethod = "destroy")
        CachingConnectionFactory rabbitConnectionFactory() {
            CachingConnectionFactory factory = new CachingConnectionFactory("127.0.0.1", closedPort);
            factory.setConnectionTimeout(1000);
            return factory;
        }

        @Bean
        CollectionSchema schema() {
            return ORDERS;
        }

        @Bean
        org.springframework.security.web.SecurityFilterChain everyoneReads(
                org.springframework.security.config.annotation.web.builders.HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests.anyRequest().permitAll()).build();
        }
    }

    @LocalServerPort
    private int port;

    @Test
    void a_consumer_started_but_not_consuming_because_its_broker_does_not_answer_is_shown_stopped_with_why() {
        Awaitility.await("the consumer says what it waits for").atMost(Duration.ofSeconds(30))
                .until(() -> get("api/overview").body().contains("\"waitingFor\":\"the broker"));

        assertThat(get("api/overview").body()).contains("\"queue\":\"nowhere\",\"state\":\"STOPPED\"");
    }

    @Test
    void a_queue_the_broker_does_not_answer_for_is_a_backlog_row_with_its_error_and_the_overview_still_answers() {
        HttpResponse<String> overview = get("api/overview");

        assertThat(overview.statusCode()).isEqualTo(200);
        BsonDocument row = BsonDocument.parse(overview.body()).getArray("queues").get(0).asDocument();
        assertThat(row.getString("queue").getValue()).isEqualTo("nowhere");
        assertThat(row.isNull("ready")).isTrue();
        assertThat(row.getString("error").getValue()).contains("127.0.0.1:" + closedPort).doesNotContain("\n");
    }

    @Test
    void an_entity_whose_id_holds_slashes_and_percent_signs_is_read() {
        String id = "a/b%c;d/../e";
        mongo.newClient().getDatabase(DATABASE).getCollection("entities", BsonDocument.class)
                .insertOne(new BsonDocument("_id", new BsonString(id)).append("name", new BsonString("odd")));

        HttpResponse<String> entity = get("api/entity?id=" + URLEncoder.encode(id, StandardCharsets.UTF_8));

        assertThat(entity.statusCode()).isEqualTo(200);
        assertThat(entity.body()).contains("odd");
    }

    @Autowired
    private History history;
    @Autowired
    private GuardedApplier applier;

    @Test
    void a_re_add_of_a_set_element_with_new_attributes_is_a_change_and_each_seq_shows_its_attributes() {
        RecordingApplier recording = history.recording(applier);
        recording.apply(Operation.add("order-7", 12, "lines", "sku-3", new BsonDocument("quantity", new BsonInt32(2))));
        recording.apply(Operation.add("order-7", 14, "lines", "sku-3", new BsonDocument("quantity", new BsonInt32(5))));

        BsonDocument entity = BsonDocument.parse(get("api/entity?id=order-7").body());
        BsonArray versions = entity.getArray("versions");

        assertThat(versions).extracting(v -> v.asDocument().getString("outcome").getValue())
                .as("the live document holds seq 14's entry").containsExactly("changed the state", "changed the state");
        assertThat(versions.get(1).asDocument().getDocument("state").getArray("lines")).containsExactly(
                BsonDocument.parse("{sku: 'sku-3', seq: 14, quantity: 5}"));
        for (int[] seqAndQuantity : new int[][] {{12, 2}, {13, 2}, {14, 5}}) {
            BsonDocument asOf = BsonDocument.parse(get("api/entity/as-of?id=order-7&seq=" + seqAndQuantity[0]).body());
            assertThat(asOf.getDocument("state").getArray("lines")).as("as of seq %d", seqAndQuantity[0])
                    .containsExactly(new BsonDocument("sku", new BsonString("sku-3"))
                            .append("seq", new BsonInt32(seqAndQuantity[0] < 14 ? 12 : 14))
                            .append("quantity", new BsonInt32(seqAndQuantity[1])));
        }
    }

    @Test
    void a_parameter_of_the_wrong_type_is_refused_in_one_line_naming_it() {
        HttpResponse<String> refused = get("api/entity/as-of?id=x&seq=abc");

        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).isEqualTo("{\"error\":\"parameter 'seq' must be a long, was 'abc'\"}");
    }

    @Test
    void an_as_of_with_a_negative_seq_is_refused_naming_the_parameter() {
        HttpResponse<String> refused = get("api/entity/as-of?id=order-7&seq=-5");

        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).isEqualTo("{\"error\":\"parameter 'seq' must be 0 or more, was -5\"}");
    }

    @Test
    void an_entity_with_no_live_document_and_no_recorded_version_is_not_found_rather_than_empty() {
        HttpResponse<String> entity = get("api/entity?id=ghost-1");

        assertThat(entity.statusCode()).isEqualTo(404);
        assertThat(entity.body()).isEqualTo(
                "{\"error\":\"no entity 'ghost-1': no live document and no recorded version\"}");
    }

    @Test
    void the_state_of_an_entity_with_no_live_document_and_no_recorded_version_as_of_a_seq_is_not_found() {
        HttpResponse<String> asOf = get("api/entity/as-of?id=ghost-2&seq=3");

        assertThat(asOf.statusCode()).isEqualTo(404);
        assertThat(asOf.body()).isEqualTo(
                "{\"error\":\"no entity 'ghost-2': no live document and no recorded version\"}");
    }

    private HttpResponse<String> get(String path) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://localhost:" + port + "/orderless/console/" + path)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
