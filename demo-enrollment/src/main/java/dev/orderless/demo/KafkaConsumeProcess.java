package dev.orderless.demo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.kafka.ShareConsumerOptions;
import dev.orderless.kafka.ShareGroupConsumer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.bson.BsonDocument;

/**
 * A share-group consumer in a JVM of its own, for {@code chaos --broker kafka} to kill with SIGKILL: what it acquired
 * and did not acknowledge comes back to the group once the acquisition lock times out. It prints {@code READY} once
 * started, then {@code HANDLED n} as its count grows, and closes when its standard input ends (its parent is gone).
 */
final class KafkaConsumeProcess {
    private KafkaConsumeProcess() {
    }

    /** Starts one on this JVM's class path. */
    static Process start(String bootstrap, String topic, String group, String mongoUri, String database, int threads)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Dlogback.configurationFile=logback.xml", "-cp",
                System.getProperty("java.class.path"), KafkaConsumeProcess.class.getName(), bootstrap, topic, group,
                mongoUri, database, String.valueOf(threads)).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** Arguments: bootstrap, topic, share group, MongoDB URI, database, threads. */
    public static void main(String[] args) throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Counts counts = new Counts(meters);
        try (MongoClient client = MongoClients.create(args[3])) {
            GuardedApplier applier = GuardedApplier.create(client.getDatabase(args[4])
                    .getCollection(Enrollment.STUDENTS, BsonDocument.class), Enrollment.STUDENT_SCHEMA,
                    ApplierOptions.ofDefaults().withMeters(meters));
            try (ShareGroupConsumer consumer = ShareGroupConsumer.builder(Map.of("bootstrap.servers", args[0]), applier)
                    .options(ShareConsumerOptions.ofDefaults(args[1], args[2]).withConcurrency(Integer.parseInt(args[5])))
                    .meters(meters).start()) {
                System.out.println("READY");
                System.out.flush();
                Thread stdin = new Thread(() -> {
                    try {
                        while (System.in.read() >= 0) {
                            // nothing is sent: end of input is the parent gone
                        }
                    } catch (IOException e) {
                        // the same: stop
                    }
                }, "parent-watch");
                stdin.setDaemon(true);
                stdin.start();
                double last = -1;
                while (stdin.isAlive() && consumer.isRunning()) {
                    double handled = counts.handled();
                    if (handled != last) {
                        last = handled;
                        System.out.println("HANDLED " + (long) handled);
                        System.out.flush();
                    }
                    Thread.sleep(50);
                }
            }
        }
    }
}
