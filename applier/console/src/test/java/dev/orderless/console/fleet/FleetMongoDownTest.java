package dev.orderless.console.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.testing.FailPoint;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The console of an instance whose MongoDB does not answer (cut at a proxy) or refuses its fleet reports: what it
 * still shows of itself, over real HTTP, a real broker and a real consumer.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class FleetMongoDownTest {
    private static final CollectionSchema STUDENTS = CollectionSchema.builder().register("name").build();
    private static RabbitBackend rabbit;
    private static MongoBackend mongo;
    private static TcpProxy proxy;
    private final String database = MongoBackend.freshDatabaseName("console_fleet_down");
    private final List<ConfigurableApplicationContext> started = new ArrayList<>();

    @BeforeAll
    static void backends(RabbitBackend rabbitBackend, MongoBackend mongoBackend) {
        rabbit = rabbitBackend;
        mongo = mongoBackend;
    }

    @AfterEach
    void close() {
        if (proxy != null) {
            proxy.restore();
        }
        started.forEach(ConfigurableApplicationContext::close);
        if (proxy != null) {
            proxy.close();
            proxy = null;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        /** Its own client, through the test's proxy (so MongoDB can be cut for it alone), quick to give up. */
        @Bean(destroyMethod = "close")
        MongoClient mongoClient(Environment environment) {
            return MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(mongo.connectionString()))
                    .applyToClusterSettings(c -> c.hosts(List.of(new com.mongodb.ServerAddress("127.0.0.1",
                            proxy.port()))).serverSelectionTimeout(1, TimeUnit.SECONDS))
                    .applyToSocketSettings(s -> s.connectTimeout(1, TimeUnit.SECONDS).readTimeout(2, TimeUnit.SECONDS))
                    .applicationName(environment.getRequiredProperty("test.app-name")).build());
        }

        @Bean(destroyMethod = "destroy")
        CachingConnectionFactory rabbitConnectionFactory() {
            return new CachingConnectionFactory(rabbit.uri());
        }

        @Bean
        CollectionSchema schema() {
            return STUDENTS;
        }

        @Bean
        org.springframework.security.web.SecurityFilterChain everyoneReads(
                org.springframework.security.config.annotation.web.builders.HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests.anyRequest().permitAll()).build();
        }
    }

    private record Running(ConfigurableApplicationContext context, String queue, String appName, String id) {
        HttpResponse<String> get(String path) {
            try {
                return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://localhost:" + context.getEnvironment().getProperty("local.server.port")
                                + "/orderless/console/" + path)).timeout(Duration.ofSeconds(60)).build(),
                        HttpResponse.BodyHandlers.ofString());
            } catch (java.io.IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        BsonDocument ok(String path) {
            HttpResponse<String> answer = get(path);
            assertThat(answer.statusCode()).as("GET %s: %s", path, answer.body()).isEqualTo(200);
            return BsonDocument.parse(answer.body());
        }

        List<String> problems() {
            return ok("api/banner").getArray("problems").stream().map(p -> p.asDocument().getString("what")
                    .getValue()).toList();
        }
    }

    private Running start(String name) {
        if (proxy == null) {
            ConnectionString target = new ConnectionString(mongo.connectionString());
            String[] hostPort = target.getHosts().get(0).split(":");
            proxy = TcpProxy.start(hostPort[0], Integer.parseInt(hostPort[1]));
        }
        String queue = RabbitExtension.uniqueQueue("fleet-down-" + name);
        String appName = "fleet-down-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).properties(
                "spring.main.banner-mode=off", "server.port=0", "server.address=127.0.0.1",
                "orderless.database=" + database, "orderless.collection=students",
                "orderless.consumer.queue=" + queue, "orderless.consumer.backoff.initial=50ms",
                "orderless.console.enabled=true", "orderless.console.fleet.interval=1s",
                "test.app-name=" + appName).run();
        started.add(context);
        return new Running(context, queue, appName, context.getBean(FleetReporter.class).instance().id());
    }

    @Test
    void the_overview_still_shows_this_instances_consumers_when_mongodb_does_not_answer() {
        Running a = start("a");
        Awaitility.await("a consumes").atMost(Duration.ofSeconds(20)).until(() -> "RUNNING".equals(
                a.ok("api/overview").getArray("consumers").get(0).asDocument().getString("state").getValue()));

        proxy.cut();

        BsonDocument overview = a.ok("api/overview");
        assertThat(overview.getArray("consumers").stream().map(c -> c.asDocument().getString("queue").getValue()))
                .containsExactly(a.queue());
        BsonDocument row = overview.getArray("queues").get(0).asDocument();
        assertThat(row.getString("queue").getValue()).isEqualTo(a.queue());
        assertThat(row.getInt32("consumers").getValue()).as("the broker still answers").isEqualTo(1);
    }

    @Test
    void the_banner_still_answers_when_mongodb_does_not_answer_and_says_so() {
        Running a = start("a");
        Awaitility.await("a reports").atMost(Duration.ofSeconds(20)).until(() -> a.ok("api/fleet")
                .getArray("instances").size() == 1);

        proxy.cut();

        assertThat(a.problems()).anySatisfy(what -> assertThat(what).contains("could not be read",
                "check that MongoDB answers"));
    }

    @Test
    void an_instance_whose_fleet_reports_are_refused_says_so_in_its_own_banner() {
        Running a = start("a");
        Running b = start("b");
        Awaitility.await("both report").atMost(Duration.ofSeconds(20)).until(() -> b.ok("api/fleet")
                .getArray("instances").size() == 2);
        try (FailPoint refused = FailPoint.alwaysOn(a.context().getBean(MongoClient.class), FailPoint.Data
                .failing("update").withError(13).forApp(a.appName())
                .onNamespace(database + ".orderless_instances"))) {
            Awaitility.await("b shows a gone").atMost(Duration.ofSeconds(20)).until(() -> b.ok("api/fleet")
                    .getArray("instances").stream().map(BsonValue::asDocument)
                    .anyMatch(i -> i.getString("id").getValue().equals(a.id())
                            && i.getString("state").getValue().equals("GONE")));

            assertThat(a.problems()).as("a's own banner, while every other instance shows a gone")
                    .anySatisfy(what -> assertThat(what).contains("instance " + a.id(), "orderless_instances"));
        }
    }
}
