package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.ConfirmedPublisher;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The dead-letter endpoint over HTTP, as an operator reaches it: each curl command of docs/operations.md's
 * examples, run with curl against an application on a random port, in the order the docs give them. Each must
 * answer what the docs say (a refusal: 400 with a JSON body naming the kinds).
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
@DirtiesContext
@SpringBootTest(classes = DeadLettersHttpTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.banner-mode=off", "orderless.collection=entities", "orderless.consumer.concurrency=1",
                "management.endpoints.web.exposure.include=health,orderlessdeadletters",
                "management.endpoint.orderlessdeadletters.access=unrestricted"})
class DeadLettersHttpTest {
    private static final Path OPERATIONS = Path.of("../../docs/operations.md");
    private static final String MARK = "<!-- curl examples: DeadLettersHttpTest";
    private static final String QUEUE = RabbitExtension.uniqueQueue("http-dlq");
    private static final String DATABASE = MongoBackend.freshDatabaseName("http_dlq");
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

    @LocalServerPort
    private int port;

    @Test
    void each_curl_example_of_the_operations_guide_answers_what_it_says() throws Exception {
        List<byte[]> poison = new ArrayList<>();
        poison.add("{\"entity\":\"p1\",\"seq\":1,\"op\":\"add\",\"field\":\"hobbies\",\"element\":\"x\"}"
                .getBytes(StandardCharsets.UTF_8));                                   // unknown_field
        poison.add("not json".getBytes(StandardCharsets.UTF_8));                      // bad_input
        poison.add(("{\"entity\":\"p2\",\"pad\":\"" + "x".repeat(600 * 1024) + "\"}")
                .getBytes(StandardCharsets.UTF_8));                                   // oversized
        ConfirmedPublisher.publishAll(publishing, QUEUE, poison);
        Awaitility.await("three dead letters").atMost(Duration.ofSeconds(30)).until(() -> messagesIn(QUEUE + ".dlq") == 3);

        List<String> commands = curlExamples();
        assertThat(commands).hasSize(5);
        List<String> answers = new ArrayList<>();
        for (String command : commands) {
            answers.add(run(command.replace("localhost:8080", "localhost:" + port) + " -w ' HTTP %{http_code}'"));
        }

        assertThat(answers.get(0)).as("list").contains("\"kinds\"").contains("\"groups\"").contains("\"unknown_field\":1")
                .endsWith("HTTP 200");
        assertThat(answers.get(1)).as("replay unknown_field").contains("\"replayed\":1").endsWith("HTTP 200");
        assertThat(answers.get(2)).as("park bad_input").contains("\"parked\":1").endsWith("HTTP 200");
        assertThat(answers.get(3)).as("purge oversized").contains("\"purged\":1").endsWith("HTTP 200");
        assertThat(answers.get(4)).as("a kind that does not exist")
                .contains("\"error\":\"unknown kind 'unknown-field'\"").contains("\"unknown_field\"").endsWith("HTTP 400");
    }

    @Test
    void a_max_that_is_not_a_whole_number_is_refused_in_the_endpoints_own_json() throws Exception {
        String base = "curl -s http://localhost:" + port + "/actuator/orderlessdeadletters";

        assertThat(run(base + "?max=abc -w ' HTTP %{http_code}'")).as("GET")
                .contains("\"error\":\"max must be a whole number of at least 1, was 'abc'\"").endsWith("HTTP 400");
        assertThat(run(base + "/replay -X POST -H 'Content-Type: application/json' -d '{\"max\":\"abc\"}'"
                + " -w ' HTTP %{http_code}'")).as("POST").contains("max must be a whole number").endsWith("HTTP 400");
        assertThat(run(base + "?max=0 -X DELETE -w ' HTTP %{http_code}'")).as("DELETE")
                .contains("max must be at least 1, was 0").endsWith("HTTP 400");
    }

    /** The curl lines of the block after the mark in docs/operations.md. */
    private static List<String> curlExamples() throws IOException {
        String doc = Files.readString(OPERATIONS);
        int at = doc.indexOf(MARK);
        assertThat(at).as("the curl examples in " + OPERATIONS).isNotNegative();
        int open = doc.indexOf("```", at);
        int close = doc.indexOf("```", open + 3);
        return doc.substring(open + 3, close).lines().map(String::strip).filter(line -> line.startsWith("curl ")).toList();
    }

    private static String run(String command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(command).isTrue();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(process.exitValue()).as(command + " -> " + out).isZero();
        return out;
    }

    private static long messagesIn(String queue) {
        var info = new RabbitAdmin(publishing).getQueueInfo(queue);
        return info == null ? -1 : info.getMessageCount();
    }
}
