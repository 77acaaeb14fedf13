package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.orderless.consume.internal.ConsumeObservations;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.backends.MongoBackend;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.Histories;
import dev.orderless.oracle.ReferenceModel;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * Stopping consumers mid-run: what was in flight finishes or goes back; a new consumer finishes the rest.
 *
 * <p>MongoDB is reached through a proxy that delays every chunk, so each batch's apply takes a few hundred
 * milliseconds: the consumers cannot drain the queue before the close, and at the close each of them is
 * waiting on MongoDB with the rest of its prefetch unacked. (Without the delay they kept up with the
 * publisher, and the close usually found nothing left to hand back.)
 *
 * <p>What RabbitMQ's quorum queues do at a close, and the test allows: a channel's queue client (3.10 and
 * 4.0 alike) sends at most 32 commands to the queue before the queue has applied them and holds the next
 * settlements back until it has ({@code quorum_commands_soft_limit}); a channel that closes meanwhile drops
 * what it held ({@code rabbit_quorum_queue:close/1} does nothing), and the queue puts those messages back as
 * unacked. So the last acks of a batch of 50 acked just before the close can be lost: 0 to 34 per close
 * here, often 16 or 17 (a batch's acks past the first 33). Those messages were applied, and come again as
 * duplicates.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class GracefulShutdownTest {
    /** One way: a batch's bulk write and its answer take at least twice this. */
    private static final Duration MONGODB_LATENCY = Duration.ofMillis(50);
    /** The outcomes a message is acked with. */
    private static final List<String> ACKED = Arrays.stream(Outcome.values()).filter(o -> !o.needsDeadLetter())
            .map(Outcome::tag).toList();

    @Test
    void a_consumer_stopped_mid_run_leaves_every_message_applied_or_queued(ConnectionFactory cf, MongoBackend backend,
                                                                           MongoDatabase fresh) throws Exception {
        long seed = Long.getLong("orderless.seed", System.nanoTime());
        Random random = new Random(seed);
        List<Operation> history = Histories.operations(Histories.stepsOfAllTypes(random, 500, 500, 50), "g");
        // increments among them: one applied twice, or acked and not applied, would show in a sum
        List<Operation> delivered = Histories.delivery(history, 0.2, random);
        Envelope envelope = new Envelope();
        List<String> published = delivered.stream().map(op -> utf8(envelope.encode(op))).toList();
        ConsumeObservationsTest.Recorded recorded = new ConsumeObservationsTest.Recorded();
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(recorded);

        var target = new ConnectionString(backend.connectionString()).getHosts().get(0).split(":");
        try (TcpProxy proxy = TcpProxy.start(target[0], target.length > 1 ? Integer.parseInt(target[1]) : 27017);
             MongoClient slow = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true");
             ConsumerFixture fixture = new ConsumerFixture(cf,
                     slow.getDatabase(fresh.getName()).getCollection("entities", BsonDocument.class), "shutdown",
                     Histories.ALL_TYPES)) {
            fixture.publish(delivered);
            proxy.latency(MONGODB_LATENCY);
            OperationConsumer first = fixture.start(OperationConsumer.builder(cf, fixture.applier)
                    .options(fixture.options(4)).observations(observations));
            Awaitility.await("a first batch acked").atMost(Duration.ofSeconds(30)).until(() -> fixture.acked() > 0);

            double ackedBeforeClose = fixture.acked();
            first.close();
            double acked = fixture.acked();
            assertThat(acked).as("acked at the close, of %d published", delivered.size()).isLessThan(delivered.size());
            assertThat(acked).as("the applies in flight at the close finished and were acked during it")
                    .isGreaterThan(ackedBeforeClose);
            assertThat(fixture.deadLettered()).isZero();
            List<String> ackedBodies = settled(recorded, ACKED);
            assertThat(ackedBodies).as("acks observed").hasSize((int) acked);

            Queued queued = takeUntilAccountedFor(cf, fixture.queue, published, ackedBodies);
            assertThat(fixture.acked()).as("nothing acked after close").isEqualTo(acked);
            assertThat(queued.redelivered()).as("messages the consumer had taken and handed back unacked").isPositive();
            int ackedAndBack = queued.bodies().size() + ackedBodies.size() - delivered.size();
            // what was acked is exactly what MongoDB has: each acked operation applied once, nothing else
            assertThat(stored(fixture)).as("MongoDB after the close = the acked operations replayed")
                    .isEqualTo(new ReferenceModel(Histories.ALL_TYPES).replay(ackedBodies.stream()
                            .map(body -> envelope.decode(body.getBytes(StandardCharsets.UTF_8))).toList()));
            System.out.printf("[shutdown] seed %d: %d messages; %.0f acked when close began, %.0f when it returned;"
                    + " %d back in the queue, %d of them taken before (%d acked, their acks dropped by the broker)%n",
                    seed, delivered.size(), ackedBeforeClose, acked, queued.bodies().size(), queued.redelivered(),
                    ackedAndBack);

            proxy.latency(Duration.ZERO);
            fixture.start(fixture.options(4));
            fixture.awaitHandled((long) acked + queued.bodies().size(), Duration.ofMinutes(1));
            fixture.awaitEmpty(fixture.queue);
            assertThat(fixture.acked()).as("the next consumer acked each message in the queue")
                    .isEqualTo(acked + queued.bodies().size());
            fixture.assertConverged(history);
        }
    }

    /** The bodies in the queue and how many of them were delivered before. */
    private record Queued(List<String> bodies, int redelivered) {
    }

    /**
     * Takes the messages in {@code queue}, without acking them, until every published message is either among
     * them or acked (the broker requeues what a closed channel held asynchronously; bounded), then puts them
     * all back by closing the channel.
     */
    private static Queued takeUntilAccountedFor(ConnectionFactory cf, String queue, List<String> published,
                                                List<String> acked) throws Exception {
        List<String> bodies = new ArrayList<>();
        int[] redelivered = {0};
        try (Connection connection = cf.createConnection(); Channel channel = connection.createChannel(false)) {
            RabbitUtils.setPhysicalCloseRequired(channel, true);   // a cached channel would keep them unacked
            Awaitility.await("every published message acked or back in the queue").atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> {
                        for (GetResponse got = channel.basicGet(queue, false); got != null;
                             got = channel.basicGet(queue, false)) {
                            bodies.add(utf8(got.getBody()));
                            redelivered[0] += got.getEnvelope().isRedeliver() ? 1 : 0;
                        }
                        assertThat(minus(minus(published, bodies), acked)).as("neither acked nor queued").isEmpty();
                    });
        }
        return new Queued(bodies, redelivered[0]);
    }

    /** The bodies of the messages the consumer settled with one of {@code outcomes}. */
    private static List<String> settled(ConsumeObservationsTest.Recorded recorded, List<String> outcomes) {
        return recorded.named(ConsumeObservations.CONSUME).stream()
                .filter(c -> outcomes.contains(c.getLowCardinalityKeyValue("orderless.outcome").getValue()))
                .map(c -> utf8(((Message) ((ReceiverContext<?>) c).getCarrier()).getBody()))
                .toList();
    }

    /** {@code from} without one copy of each of {@code taken} (a multiset difference). */
    private static List<String> minus(List<String> from, List<String> taken) {
        Map<String, Integer> left = new HashMap<>();
        taken.forEach(body -> left.merge(body, 1, Integer::sum));
        List<String> rest = new ArrayList<>();
        for (String body : from) {
            if (left.getOrDefault(body, 0) > 0) {
                left.merge(body, -1, Integer::sum);
            } else {
                rest.add(body);
            }
        }
        return rest;
    }

    private static Map<String, EntityState> stored(ConsumerFixture fixture) {
        return EntityState.readAll(fixture.collection.find(), Histories.ALL_TYPES);
    }

    private static String utf8(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }
}
