package example;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.broker.QueueTopology;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.stamp.HybridLogicalClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * A whole application on orderless, outside any framework: it publishes students' actions, four
 * competing consumers apply them in whatever order they arrive, it checks the students against the
 * sequential oracle, and it shuts down so that the JVM ends as soon as {@code main} returns.
 */
public final class App {
    private static final CollectionSchema STUDENTS = CollectionSchema.builder()
            .set(SetField.of("classes", "name")).register("name").build();

    public static void main(String[] args) throws Exception {
        for (String variable : new String[] {"MONGODB_URI", "RABBITMQ_URI"}) {
            if (System.getenv(variable) == null) {
                System.err.println("error: set " + variable + " (the demo's 'serve --detach' prints both)");
                System.exit(2);
            }
        }
        String queue = "example.ops";
        MeterRegistry meters = new SimpleMeterRegistry();   // your application's registry: Prometheus, say
        MongoClient mongo = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(System.getenv("MONGODB_URI")))
                .writeConcern(WriteConcern.MAJORITY).build());
        // tag::threads[]
        ExecutorService amqpThreads = Executors.newCachedThreadPool();
        CachingConnectionFactory rabbit = new CachingConnectionFactory(URI.create(System.getenv("RABBITMQ_URI")));
        rabbit.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
        rabbit.setPublisherReturns(true);
        rabbit.getRabbitConnectionFactory().setChannelRpcTimeout(10_000);   // not 10 min while RabbitMQ blocks it
        // threads this application stops: outside a Spring context the factory's own pool outlives destroy()
        rabbit.setExecutor(amqpThreads);
        // end::threads[]

        MongoDatabase db = mongo.getDatabase("example");
        MongoCollection<BsonDocument> students = db.getCollection("students", BsonDocument.class);
        students.drop();
        QueueTopology.declare(rabbit, queue, queue + ".dlq");
        // tag::consumer[]
        OperationConsumer consumer = OperationConsumer.builder(rabbit, GuardedApplier.create(students, STUDENTS,
                        ApplierOptions.ofDefaults().withMeters(meters)))   // orderless.apply.*
                .options(ConsumerOptions.ofDefaults(queue).withConcurrency(4))
                .meters(meters)   // orderless.consume.*; without it, a registry of its own that nobody reads
                .start();
        // end::consumer[]
        StampingPublisher publisher = new StampingPublisher(HybridLogicalClock.create(1),
                ConfirmingPublisher.toQueue(rabbit, queue, PublisherOptions.ofDefaults().withMeters(meters)));

        List<Operation> published = new ArrayList<>();
        Random random = new Random(7);
        for (int i = 0; i < 1000; i++) {
            String student = "student-" + random.nextInt(50);
            String course = "CS " + (100 + random.nextInt(8));
            int action = random.nextInt(10);
            published.add(publisher.publish(student, seq -> action < 5 ? Operation.add(student, seq, "classes", course)
                    : action < 9 ? Operation.remove(student, seq, "classes", course)
                    : Operation.assign(student, seq, "name", new BsonString("Name " + seq))));
        }
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (handled(meters) < published.size() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        System.out.printf("LAST APPLY %d of %d messages handled%n", (long) handled(meters), published.size());

        Map<String, EntityState> expected = new ReferenceModel(STUDENTS).replay(published);
        Map<String, EntityState> stored = EntityState.readAll(students.find(), STUDENTS);
        System.out.println("RESULT converged=" + expected.equals(stored) + " students=" + expected.size());

        // tag::shutdown[]
        // shutdown, in this order: consumers, then the connections, then the threads they ran on
        consumer.close();
        rabbit.destroy();
        amqpThreads.shutdown();
        mongo.close();
        // end::shutdown[]
    }

    private static double handled(MeterRegistry meters) {
        return meters.find("orderless.consume.outcomes").counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
