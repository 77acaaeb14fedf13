package dev.orderless.console.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.boot.OrderlessConsumer;
import dev.orderless.message.Envelope;
import dev.orderless.testing.FailPoint;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Two console applications on one MongoDB, over real HTTP, a real broker and consumers: each lists both in
 * {@code api/fleet}; one closed is shown stopped, one whose reports stop without a goodbye (a killed process) is shown
 * gone; a consumer held by MongoDB is in the banner of the other; the overview counts a queue's backlog.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class FleetConsoleTest {
    private static final CollectionSchema STUDENTS = CollectionSchema.builder().register("name").build();
    private static RabbitBackend rabbit;
    private static MongoBackend mongo;
    private static ConnectionFactory publishing;
    private final String database = MongoBackend.freshDatabaseName("console_fleet");
    private final List<ConfigurableApplicationContext> started = new ArrayList<>();

    @BeforeAll
    static void backends(RabbitBackend rabbitBackend, MongoBackend mongoBackend, ConnectionFactory confirming) {
        rabbit = rabbitBackend;
        mongo = mongoBackend;
        publishing = confirming;
    }

    @AfterEach
    void close() {
        started.forEach(ConfigurableApplicationContext::close);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        /** Its own client, named for a fail point that fails its commands and no other test's. */
        @Bean(destroyMethod = "close")
        MongoClient mongoClient(Environment environment) {
            return MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(mongo.connectionString()))
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
        @org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication
        org.springframework.security.web.SecurityFilterChain everyoneReads(
                org.springframework.security.config.annotation.web.builders.HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests.anyRequest().permitAll()).build();
        }
    }

    /** One instance: what it consumes, the name its MongoDB client gives, and its id in the fleet. */
    private record Running(ConfigurableApplicationContext context, String queue, String appName, String id) {

        BsonDocument get(String path) {
            try {
                HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://localhost:" + context.getEnvironment().getProperty("local.server.port")
                                + "/orderless/console/" + path)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).as("GET %s: %s", path, answer.body()).isEqualTo(200);
                return BsonDocument.parse(answer.body());
            } catch (java.io.IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        /** Each instance in its {@code api/fleet} with its state, as {@code id=STATE}. */
        List<String> fleet() {
            return get("api/fleet").getArray("instances").stream().map(BsonValue::asDocument)
                    .map(i -> i.getString("id").getValue() + "=" + i.getString("state").getValue()).toList();
        }
    }

    private Running start(String name) {
        String queue = RabbitExtension.uniqueQueue("fleet-" + name);
        String appName = "fleet-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
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
    void two_instances_on_one_mongodb_are_both_listed_up_by_the_fleet_of_either() {
        Running a = start("a");
        Running b = start("b");

        Awaitility.await("both report").atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(a.fleet()).containsExactly(a.id() + "=UP", b.id() + "=UP");   // itself first
            assertThat(b.fleet()).containsExactly(b.id() + "=UP", a.id() + "=UP");
        });
        BsonDocument ofB = a.get("api/fleet").getArray("instances").get(1).asDocument();
        assertThat(ofB.getArray("consumers").get(0).asDocument().getString("queue").getValue()).isEqualTo(b.queue());
    }

    @Test
    void an_instance_without_a_web_server_reports_itself_when_told_to_and_is_listed_by_a_console() {
        Running a = start("a");
        String queue = RabbitExtension.uniqueQueue("fleet-headless");
        ConfigurableApplicationContext headless = new SpringApplicationBuilder(App.class)
                .web(org.springframework.boot.WebApplicationType.NONE).properties("spring.main.banner-mode=off",
                        "orderless.database=" + database, "orderless.collection=students",
                        "orderless.consumer.queue=" + queue, "orderless.console.fleet.report=true",
                        "orderless.console.fleet.interval=1s", "test.app-name=fleet-headless").run();
        started.add(headless);
        String id = headless.getBean(FleetReporter.class).instance().id();

        Awaitility.await("the headless instance reports").atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(a.fleet()).contains(id + "=UP"));
        BsonDocument reported = a.get("api/fleet").getArray("instances").stream().map(BsonValue::asDocument)
                .filter(i -> i.getString("id").getValue().equals(id)).findFirst().orElseThrow();
        assertThat(reported.getArray("consumers").get(0).asDocument().getString("queue").getValue()).isEqualTo(queue);
    }

    @Test
    void an_instance_closed_is_shown_stopped_by_the_others() {
        Running a = start("a");
        Running b = start("b");
        Awaitility.await("b reports").atMost(Duration.ofSeconds(20)).until(() -> a.fleet().contains(b.id() + "=UP"));

        b.context().close();

        Awaitility.await("b said goodbye").atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(a.fleet()).contains(b.id() + "=STOPPED"));
    }

    @Test
    void an_instance_whose_reports_stop_without_a_goodbye_is_shown_gone_after_three_intervals() {
        Running a = start("a");
        Running b = start("b");
        Awaitility.await("b reports").atMost(Duration.ofSeconds(20)).until(() -> a.fleet().contains(b.id() + "=UP"));

        b.context().getBean(FleetReporter.class).halt();   // as a killed process: no goodbye

        Awaitility.await("b silent for 3 intervals").atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> assertThat(a.fleet()).contains(b.id() + "=GONE"));
        assertThat(a.get("api/banner").getArray("problems").stream().map(p -> p.asDocument().getString("what")
                .getValue())).anySatisfy(what -> assertThat(what).contains("instance " + b.id()));
    }

    @Test
    void a_consumer_waiting_for_mongodb_is_an_error_in_the_banner_of_another_instance_naming_its_queue()
            throws Exception {
        Running a = start("a");
        Running b = start("b");
        try (FailPoint election = FailPoint.alwaysOn(a.context().getBean(MongoClient.class), FailPoint.Data
                .failing("update").withError(10107, "RetryableWriteError").forApp(a.appName())
                .onNamespace(database + ".students"))) {
            ConfirmedPublisher.publishAll(publishing, a.queue(), List.of(Envelope.ofDefaults()
                    .encode(Operation.assign("s-1", 1, "name", new BsonString("Ada")))));

            Awaitility.await("b's banner shows a's consumer stuck").atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(b.get("api/banner").getArray("problems")).map(BsonValue::asDocument)
                            .anySatisfy(problem -> {
                                assertThat(problem.getString("severity").getValue()).isEqualTo("error");
                                assertThat(problem.getString("what").getValue()).contains("queue '" + a.queue() + "'",
                                        "instance " + a.id(), "stuck", "MongoDB");
                                assertThat(problem.getString("link").getValue()).isEqualTo("#/fleet");
                            }));
        }
    }

    @Test
    void the_overview_counts_a_queues_ready_messages_and_its_consumers() throws Exception {
        Running a = start("a");
        Awaitility.await("a consumes").atMost(Duration.ofSeconds(20))
                .until(() -> queue(a).getInt32("consumers").getValue() > 0);
        a.context().getBean(OrderlessConsumer.class).stop();
        List<byte[]> three = new ArrayList<>();
        for (int seq = 1; seq <= 3; seq++) {
            three.add(Envelope.ofDefaults().encode(Operation.assign("s-" + seq, seq, "name", new BsonString("x"))));
        }

        ConfirmedPublisher.publishAll(publishing, a.queue(), three);

        Awaitility.await("three ready, none consuming").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            BsonDocument row = queue(a);
            assertThat(row.getInt32("ready").getValue()).isEqualTo(3);
            assertThat(row.getInt32("consumers").getValue()).isZero();
        });
        BsonDocument row = queue(a);
        assertThat(row.getString("deadLetterQueue").getValue()).isEqualTo(a.queue() + ".dlq");
        assertThat(row.getInt32("deadLetterReady").getValue()).isZero();
        assertThat(row.isNull("unacked")).as("no management API named").isTrue();
        assertThat(row.containsKey("error")).isFalse();
    }

    private static BsonDocument queue(Running running) {
        BsonArray queues = running.get("api/overview").getArray("queues");
        return queues.stream().map(BsonValue::asDocument)
                .filter(q -> q.getString("queue").getValue().equals(running.queue())).findFirst()
                .orElseThrow(() -> new AssertionError("no row for " + running.queue() + " in " + queues));
    }

}
