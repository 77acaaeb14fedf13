package dev.orderless.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.SetField;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.RabbitExtension;
import jakarta.servlet.DispatcherType;
import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The console under an application's Spring Security, over real HTTP, with a real consumer and broker: reading needs
 * only a login; an action needs the action role, the CSRF token and the console's header, and a refused one answers
 * 403 and leaves every letter where it was.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@DirtiesContext
@SpringBootTest(classes = ConsoleSecurityTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.banner-mode=off", "orderless.collection=entities", "orderless.consumer.concurrency=1",
                "orderless.console.enabled=true"})
class ConsoleSecurityTest {
    static final CollectionSchema SCHEMA = CollectionSchema.builder().set(SetField.of("classes", "name"))
            .register("name").build();
    private static final String QUEUE = RabbitExtension.uniqueQueue("console");
    private static final String DATABASE = MongoBackend.freshDatabaseName("console");
    private static RabbitBackend rabbit;
    private static MongoBackend mongo;
    private static ConnectionFactory publishing;

    @BeforeAll
    static void backends(RabbitBackend rabbitBackend, MongoBackend mongoBackend, ConnectionFactory confirming) {
        rabbit = rabbitBackend;
        mongo = mongoBackend;
        publishing = confirming;
    }

    @DynamicPropertySource
    static void connections(DynamicPropertyRegistry registry) {
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

        @Bean(destroyMethod = "destroy")
        CachingConnectionFactory rabbitConnectionFactory() {
            return new CachingConnectionFactory(rabbit.uri());
        }

        @Bean
        CollectionSchema schema() {
            return SCHEMA;
        }

        // tag::console-security[]
        /** Only staff see the console; its actions also need ORDERLESS_OPERATOR (orderless.console.action-role). */
        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests
                            // a refusal's error page must not ask for a login: a refused POST answers 403
                            .dispatcherTypeMatchers(DispatcherType.ERROR).permitAll()
                            .requestMatchers("/orderless/console/**").hasAnyRole("VIEWER", "ORDERLESS_OPERATOR")
                            .anyRequest().authenticated())
                    .formLogin(Customizer.withDefaults())   // CSRF protection stays on: Spring Security's default
                    .httpBasic(Customizer.withDefaults())
                    .build();
        }
        // end::console-security[]

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername("viewer").password("{noop}viewer-pw").roles("VIEWER").build(),
                    User.withUsername("operator").password("{noop}operator-pw").roles("ORDERLESS_OPERATOR").build(),
                    User.withUsername("stranger").password("{noop}stranger-pw").roles("SALES").build());
        }
    }

    @LocalServerPort
    private int port;

    @BeforeEach
    void oneDeadLetter() throws Exception {
        letters().deleteMany(new org.bson.BsonDocument());
        ConfirmedPublisher.publishAll(publishing, QUEUE, List.of("not json (console)".getBytes(StandardCharsets.UTF_8)));
        Awaitility.await("one dead letter").atMost(Duration.ofSeconds(30)).until(() -> deadLetters() == 1);
    }

    @Test
    void a_user_without_the_action_role_sees_the_letters_but_a_replay_answers_403_and_moves_nothing() throws Exception {
        Browser viewer = new Browser("viewer", "viewer-pw");

        assertThat(viewer.get("api/letters/groups").body()).contains("\"kind\":\"bad_input\"");
        assertThat(viewer.get("api/session").body()).contains("\"canAct\":false");
        HttpResponse<String> replay = viewer.act("api/letters/replay?queue=" + QUEUE + "&kind=bad_input", true, true);

        assertThat(replay.statusCode()).isEqualTo(403);
        assertThat(replay.body()).contains("user 'viewer' lacks the role ORDERLESS_OPERATOR");
        assertThat(deadLetters()).as("the letter stays").isEqualTo(1);
    }

    @Test
    void an_action_without_the_csrf_token_answers_403_and_moves_nothing() throws Exception {
        Browser operator = new Browser("operator", "operator-pw");

        HttpResponse<String> purge = operator.act("api/letters/purge?queue=" + QUEUE + "&kind=bad_input", false, true);

        assertThat(purge.statusCode()).isEqualTo(403);
        assertThat(deadLetters()).as("the letter stays").isEqualTo(1);
    }

    @Test
    void an_action_without_the_consoles_header_answers_403_and_moves_nothing() throws Exception {
        Browser operator = new Browser("operator", "operator-pw");

        HttpResponse<String> purge = operator.act("api/letters/purge?queue=" + QUEUE + "&kind=bad_input", true, false);

        assertThat(purge.statusCode()).isEqualTo(403);
        assertThat(purge.body()).contains("X-Orderless-Console");
        assertThat(deadLetters()).as("the letter stays").isEqualTo(1);
    }

    @Test
    void an_operator_with_the_token_and_header_parks_the_letter_and_is_told_so_in_one_line() throws Exception {
        Browser operator = new Browser("operator", "operator-pw");

        HttpResponse<String> park = operator.act("api/letters/park?queue=" + QUEUE + "&kind=bad_input", true, true);

        assertThat(park.statusCode()).isEqualTo(200);
        assertThat(park.body()).contains("parked 1 letter(s)");
        assertThat(deadLetters()).isZero();
    }

    @Test
    void an_action_by_filter_takes_the_letters_the_same_filter_lists_and_leaves_the_parked_ones_alone()
            throws Exception {
        Browser operator = new Browser("operator", "operator-pw");
        assertThat(operator.act("api/letters/park?queue=" + QUEUE + "&kind=bad_input", true, true).statusCode())
                .isEqualTo(200);
        ConfirmedPublisher.publishAll(publishing, QUEUE, List.of("not json (second)".getBytes(StandardCharsets.UTF_8)));
        Awaitility.await("a second dead letter").atMost(Duration.ofSeconds(30)).until(() -> deadLetters() == 1);
        String filter = "queue=" + QUEUE + "&kind=bad_input";
        assertThat(operator.get("api/letters?" + filter).body()).as("the filter lists the dead letter only")
                .contains("\"total\":1");

        HttpResponse<String> purge = operator.act("api/letters/purge?" + filter, true, true);

        assertThat(purge.body()).contains("purged 1 letter(s)");
        assertThat(letters().countDocuments(com.mongodb.client.model.Filters.eq("status", "parked")))
                .as("the parked letter, which the filter did not list, is kept").isEqualTo(1);
    }

    @Test
    void without_a_login_nothing_is_shown() throws Exception {
        HttpResponse<String> anonymous = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + port + "/orderless/console/api/overview")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(anonymous.statusCode()).isEqualTo(401);
    }

    @Test
    void a_user_the_applications_security_keeps_out_gets_403_from_every_page_and_endpoint() throws Exception {
        Browser stranger = new Browser("stranger", "stranger-pw");

        assertThat(stranger.get("").statusCode()).isEqualTo(403);
        assertThat(stranger.get("api/letters").statusCode()).isEqualTo(403);
    }

    @Test
    void the_page_forbids_any_script_but_its_own() throws Exception {
        HttpResponse<String> page = new Browser("viewer", "viewer-pw").get("");

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(csp ->
                assertThat(csp).contains("script-src 'self'").doesNotContain("unsafe-inline"));
        assertThat(page.body()).contains("<script src=\"assets/console.js\"");
    }

    /** The dead letters the console stored (it moves them out of the dead-letter queue as they arrive). */
    private long deadLetters() {
        return letters().countDocuments(com.mongodb.client.model.Filters.eq("status", "dead"));
    }

    private static com.mongodb.client.MongoClient client;

    private static com.mongodb.client.MongoCollection<org.bson.BsonDocument> letters() {
        if (client == null) {
            client = mongo.newClient();
        }
        return client.getDatabase(DATABASE).getCollection("orderless_dead_letters", org.bson.BsonDocument.class);
    }

    /** A logged-in user's HTTP client, with its session cookie, as a browser holds it. */
    private final class Browser {
        private final HttpClient client = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
        private final String authorization;

        Browser(String user, String password) {
            authorization = "Basic " + Base64.getEncoder().encodeToString((user + ":" + password)
                    .getBytes(StandardCharsets.UTF_8));
        }

        HttpResponse<String> get(String path) throws Exception {
            return client.send(HttpRequest.newBuilder(uri(path)).header("Authorization", authorization).build(),
                    HttpResponse.BodyHandlers.ofString());
        }

        HttpResponse<String> act(String path, boolean withCsrf, boolean withHeader) throws Exception {
            HttpRequest.Builder post = HttpRequest.newBuilder(uri(path)).header("Authorization", authorization)
                    .POST(HttpRequest.BodyPublishers.noBody());
            if (withCsrf) {
                Matcher token = Pattern.compile("\"header\":\"([^\"]+)\",\"token\":\"([^\"]+)\"|\"token\":\"([^\"]+)\","
                        + "\"header\":\"([^\"]+)\"").matcher(get("api/session").body());
                assertThat(token.find()).as("the session hands the page a CSRF token").isTrue();
                post.header(token.group(1) != null ? token.group(1) : token.group(4),
                        token.group(2) != null ? token.group(2) : token.group(3));
            }
            if (withHeader) {
                post.header(ConsoleController.ACTION_HEADER, "1");
            }
            return client.send(post.build(), HttpResponse.BodyHandlers.ofString());
        }

        private URI uri(String path) {
            return URI.create("http://localhost:" + port + "/orderless/console/" + path);
        }
    }
}
