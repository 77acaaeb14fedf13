package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.broker.QueueTopology;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The demo's {@code consume} command as two real OS processes on the same queue; one is killed with
 * SIGKILL mid-run. The broker hands its unacked messages to the survivor, which finishes: the students
 * equal the oracle and nothing is lost.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsumeProcessesTest {

    @Test
    void two_consume_processes_one_killed_with_sigkill_still_converge_with_nothing_lost(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf, MongoDatabase db) throws Exception {
        long seed = Long.getLong("orderless.seed", System.nanoTime());
        String queue = RabbitExtension.uniqueQueue("consume");
        QueueTopology.declare(cf, queue, queue + ".dlq");
        List<Operation> ops = new WebApp(MongoCounterStamper.create(db.getCollection("seq_counters", BsonDocument.class)),
                100, 10, seed).act(3500);
        Random random = new Random(seed);
        Envelope envelope = new Envelope();
        List<byte[]> messages = new ArrayList<>();
        for (Operation op : ops) {
            messages.add(envelope.encode(op));
            if (random.nextDouble() < 0.2) {
                messages.add(envelope.encode(op));
            }
        }
        Collections.shuffle(messages, random);
        ConfirmingPublisher.toQueue(cf, queue, PublisherOptions.ofDefaults()).publishRaw(messages);

        Path logs = Files.createDirectories(Path.of("target", "consume-processes"));
        Process victim = consume(mongo, rabbit, db.getName(), queue, logs.resolve("victim.log"));
        Process survivor = consume(mongo, rabbit, db.getName(), queue, logs.resolve("survivor.log"));
        try {
            var students = db.getCollection(Enrollment.STUDENTS, BsonDocument.class);
            Awaitility.await("both processes consuming").atMost(Duration.ofSeconds(60))
                    .until(() -> students.countDocuments() >= 20);
            victim.destroyForcibly();   // SIGKILL: no shutdown hook, no acks, no goodbyes
            assertThat(victim.waitFor(30, TimeUnit.SECONDS)).isTrue();
            long left = new RabbitAdmin(cf).getQueueInfo(queue).getMessageCount();
            System.out.printf("[processes] seed %d: %d messages; killed one consumer process with %d still queued%n",
                    seed, messages.size(), left);
            assertThat(left).as("killed mid-run").isPositive();

            assertThat(survivor.waitFor(3, TimeUnit.MINUTES)).as("the survivor finishes and exits when idle").isTrue();
            assertThat(survivor.exitValue()).isZero();
            System.out.println("[processes] survivor: " + Files.readAllLines(logs.resolve("survivor.log")).stream()
                    .filter(l -> l.startsWith("CONSUMED")).findFirst().orElse("?"));

            assertThat(new RabbitAdmin(cf).getQueueInfo(queue).getMessageCount()).as("lost=0: every message acked").isZero();
            assertThat(new RabbitAdmin(cf).getQueueInfo(queue + ".dlq").getMessageCount()).isZero();
            assertThat(EntityState.readAll(students.find(), Enrollment.STUDENT_SCHEMA))
                    .isEqualTo(new ReferenceModel(Enrollment.STUDENT_SCHEMA).replay(ops));
        } finally {
            victim.destroyForcibly();
            survivor.destroyForcibly();
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    private static Process consume(MongoBackend mongo, RabbitBackend rabbit, String database, String queue, Path log)
            throws Exception {
        return ConsumeProcess.start(mongo.connectionString(), rabbit.uri().toString(), database, queue, 2, 5, log);
    }

}
