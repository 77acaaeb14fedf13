package dev.orderless.chaos;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.demo.Enrollment;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;

/**
 * A share-group consumer in an OS process of its own, as a team deploys one: {@link #main} starts a
 * {@link ShareGroupConsumer} on the students and prints {@link #STARTED}; {@link #kill()} SIGKILLs it, so that what its
 * consumers acquired is neither acknowledged nor released: the broker offers it again once the acquisition lock times
 * out, and nothing else brings it back.
 */
final class KafkaConsumerProcess implements AutoCloseable {
    /** The line {@link #main} prints once its consumers are started. */
    static final String STARTED = "KAFKA CONSUMER started";
    private static final Duration START = Duration.ofMinutes(1);

    private final Process process;
    private final Path log;

    private KafkaConsumerProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** What the process consumes and where it writes. */
    record Target(String bootstrap, String mongoUri, String database, String topic, String group, int concurrency) {
        List<String> args() {
            return List.of(bootstrap, mongoUri, database, topic, group, String.valueOf(concurrency));
        }
    }

    /** Starts a consumer process on {@code target}, its output in {@code log}; returns once its consumers started. */
    static KafkaConsumerProcess start(Target target, Path log) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Dlogback.configurationFile=console-process-logback.xml",
                "-cp", System.getProperty("java.class.path"), KafkaConsumerProcess.class.getName()));
        command.addAll(target.args());
        Files.createDirectories(log.getParent());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        Process process = builder.start();
        process.getOutputStream().close();
        long deadline = System.nanoTime() + START.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                if (Files.readAllLines(log, StandardCharsets.UTF_8).stream().anyMatch(l -> l.startsWith(STARTED))) {
                    return new KafkaConsumerProcess(process, log);
                }
                if (process.waitFor(100, TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("the Kafka consumer process exited with " + process.exitValue()
                            + " before it started; see " + log.toAbsolutePath());
                }
            }
            throw new IllegalStateException("the Kafka consumer process did not start within " + START.toSeconds()
                    + " s; see " + log.toAbsolutePath());
        } catch (IOException | InterruptedException | RuntimeException e) {
            process.destroyForcibly();
            throw e;
        }
    }

    Path log() {
        return log;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL: nothing of the consumer runs, its connections just close; returns once the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the Kafka consumer process " + process.pid() + " outlived SIGKILL by 30 s");
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    /** {@code <bootstrap> <mongodb uri> <database> <topic> <group> <concurrency>}; runs until killed. */
    public static void main(String[] args) throws InterruptedException {
        if (args.length != 6) {
            System.err.println("usage: KafkaConsumerProcess <bootstrap> <mongodb uri> <database> <topic> <group>"
                    + " <concurrency>");
            System.exit(2);
        }
        MongoClient mongo = MongoClients.create(args[1]);
        GuardedApplier applier = GuardedApplier.create(mongo.getDatabase(args[2]).getCollection(Enrollment.STUDENTS,
                BsonDocument.class), Enrollment.STUDENT_SCHEMA);
        ShareGroupConsumer consumer = ShareGroupConsumer.builder(Map.of("bootstrap.servers", args[0]), applier)
                .options(ShareConsumerOptions.ofDefaults(args[3], args[4]).withConcurrency(Integer.parseInt(args[5])))
                .start();
        System.out.println(STARTED);
        System.out.flush();
        while (consumer.isRunning()) {
            Thread.sleep(500);   // a process's main thread idling until it is killed, not a test's wait
        }
        System.out.println("KAFKA CONSUMER stopped on its own: " + consumer.waitingFor().orElse("no reason given"));
        System.exit(3);
    }
}
