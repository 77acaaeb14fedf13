package dev.orderless.chaos;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.SetField;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;

/**
 * A console application as a team runs one, in an OS process of its own: a Spring Boot web application with a
 * consumer on one work queue and {@code orderless.console.enabled=true}, so its console ingests the consumer's
 * dead-letter queue into MongoDB and serves the page and its JSON on {@code 127.0.0.1} (any free port). Started by
 * {@link #start}, which waits for the line it prints once it serves, and stopped gracefully ({@link #stop}, SIGTERM:
 * Boot's shutdown hook closes the context) or killed ({@link #kill}, SIGKILL: nothing runs, the sockets just close).
 * Reads need no login here (the application binds to loopback only); the console's actions are not used.
 */
final class ConsoleProcess implements AutoCloseable {
    /** The line {@link #main} prints once the console serves; the port follows it. */
    static final String SERVING = "CONSOLE serving on port ";
    private static final Duration START = Duration.ofMinutes(2);

    private final Process process;
    private final Path log;
    private final int port;

    private ConsoleProcess(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /** What the console process connects to and which queues it serves. */
    record Target(String mongoUri, String rabbitUri, String database, String workQueue, String deadLetterQueue) {
        Target {
            for (String part : new String[] {mongoUri, rabbitUri, database, workQueue, deadLetterQueue}) {
                if (part == null || part.isBlank()) {
                    throw new IllegalArgumentException("console process: every part of the target is required, was "
                            + List.of(String.valueOf(mongoUri), String.valueOf(rabbitUri), String.valueOf(database),
                            String.valueOf(workQueue), String.valueOf(deadLetterQueue)));
                }
            }
        }

        List<String> args() {
            return List.of(mongoUri, rabbitUri, database, workQueue, deadLetterQueue);
        }
    }

    /**
     * Starts a console process on {@code target}, its output in {@code log}, and waits (at most 2 minutes) until it
     * serves.
     */
    static ConsoleProcess start(Target target, Path log) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-Dlogback.configurationFile=console-process-logback.xml",
                "-cp", System.getProperty("java.class.path"), ConsoleProcess.class.getName()));
        command.addAll(target.args());
        Files.createDirectories(log.getParent());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        // the target names the backends: nothing of CI's environment chooses others inside
        builder.environment().remove("MONGODB_URI");
        builder.environment().remove("RABBITMQ_URI");
        Process process = builder.start();
        process.getOutputStream().close();
        long deadline = System.nanoTime() + START.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                Optional<Integer> port = Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                        .filter(l -> l.startsWith(SERVING)).findFirst()
                        .map(l -> Integer.parseInt(l.substring(SERVING.length()).strip()));
                if (port.isPresent()) {
                    return new ConsoleProcess(process, log, port.get());
                }
                if (process.waitFor(100, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("the console process exited with " + process.exitValue()
                            + " before it served; see " + log.toAbsolutePath());
                }
            }
            throw new IllegalStateException("the console process did not serve within " + START.toSeconds() + " s; see "
                    + log.toAbsolutePath());
        } catch (IOException | InterruptedException | RuntimeException e) {
            process.destroyForcibly();
            throw e;
        }
    }

    /** {@code path} under the console's path, as the page asks for it ({@code api/letters/groups}). */
    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + "/orderless/console/" + path);
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return log;
    }

    /** SIGKILL, as the OOM killer or a lost host does: nothing of the application runs; returns once it is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the console process " + process.pid() + " outlived SIGKILL by 30 s");
        }
    }

    /** SIGTERM, as a deployment stops it: Boot closes the context (ingestion stopped, letters held go back). */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the console process " + process.pid() + " did not stop within 60 s of"
                    + " SIGTERM; killed; see " + log.toAbsolutePath());
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    // ---- the process itself -----------------------------------------------------------------------------------

    /** Tomcat logs through java.util.logging at INFO: held here (a collected logger forgets its level), set to WARNING. */
    private static final java.util.logging.Logger TOMCAT = java.util.logging.Logger.getLogger("org.apache");

    /** Entities of one register: the console needs an entity collection to show; nothing is applied here. */
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().set(SetField.of("classes", "name"))
            .register("name").build();

    /** The application: its clients, its schema, and reads open to this machine (it binds to loopback). */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean(destroyMethod = "close")
        MongoClient mongoClient(Environment env) {
            return MongoClients.create(env.getRequiredProperty("console-process.mongodb-uri"));
        }

        @Bean(destroyMethod = "destroy")
        CachingConnectionFactory rabbitConnectionFactory(Environment env) {
            return new CachingConnectionFactory(URI.create(env.getRequiredProperty("console-process.rabbitmq-uri")));
        }

        @Bean
        CollectionSchema schema() {
            return SCHEMA;
        }

        @Bean
        org.springframework.security.web.SecurityFilterChain readsFromThisMachine(
                org.springframework.security.config.annotation.web.builders.HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(requests -> requests.anyRequest().permitAll()).build();
        }
    }

    /** {@code <mongodb uri> <rabbitmq uri> <database> <work queue> <dead-letter queue>}; runs until stopped. */
    public static void main(String[] args) {
        if (args.length != 5) {
            System.err.println("usage: ConsoleProcess <mongodb uri> <rabbitmq uri> <database> <work queue>"
                    + " <dead-letter queue>");
            System.exit(2);
        }
        Map<String, Object> properties = new java.util.LinkedHashMap<>();
        properties.put("console-process.mongodb-uri", args[0]);
        properties.put("console-process.rabbitmq-uri", args[1]);
        properties.put("orderless.database", args[2]);
        properties.put("orderless.collection", "entities");
        properties.put("orderless.leases", "leases");
        properties.put("orderless.consumer.queue", args[3]);
        properties.put("orderless.consumer.dead-letter-queue", args[4]);
        properties.put("orderless.publisher.enabled", "false");
        properties.put("orderless.console.enabled", "true");
        properties.put("server.address", "127.0.0.1");
        properties.put("server.port", 0);
        // the application's own security chain opens reads; no generated password to log
        properties.put("spring.autoconfigure.exclude",
                "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration");
        TOMCAT.setLevel(java.util.logging.Level.WARNING);
        System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");   // logback.xml of the test
        ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).web(WebApplicationType.SERVLET)
                .bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                .initializers(context -> context.getEnvironment().getPropertySources()
                        .addFirst(new MapPropertySource("console-process", properties)))
                .run();
        int port = ((org.springframework.boot.web.server.context.WebServerApplicationContext) app).getWebServer()
                .getPort();
        System.out.println(SERVING + port);
        System.out.flush();
        // Tomcat's threads keep the JVM up; SIGTERM runs Boot's shutdown hook, which closes the context
    }
}
