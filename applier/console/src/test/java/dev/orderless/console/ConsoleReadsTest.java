package dev.orderless.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
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
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What the console reads, in an application that lets everyone read and whose broker does not answer: the consumer is
 * shown stopped (started is not consuming), any entity id can be read, and a bad parameter is refused in one line.
 */
@ExtendWith(MongoExtension.class)
@DirtiesContext
@SpringBootTest(classes = ConsoleReadsTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.banner-mode=off", "orderless.collection=entities", "orderless.console.enabled=true",
                "orderless.consumer.queue=nowhere"})
class ConsoleReadsTest {
    private static final String DATABASE = MongoBackend.freshDatabaseName("console_reads");
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
            return ConsoleSecurityTest.SCHEMA;
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

        assertThat(get("api/overview").body()).contains("\"state\":\"STOPPED\"").doesNotContain("\"state\":\"RUNNING\"");
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

    @Test
    void a_parameter_of_the_wrong_type_is_refused_in_one_line_naming_it() {
        HttpResponse<String> refused = get("api/entity/as-of?id=x&seq=abc");

        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).isEqualTo("{\"error\":\"parameter 'seq' must be a long, was 'abc'\"}");
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
