package dev.orderless.chaos;

import static dev.orderless.chaos.Scenarios.hold;
import static dev.orderless.chaos.Scenarios.progress;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import dev.orderless.outbox.Outbox;
import dev.orderless.outbox.OutboxOptions;
import dev.orderless.outbox.OutboxRelay;
import dev.orderless.outbox.RelayOptions;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.testing.MongoExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * Failover on a three-node RabbitMQ cluster ({@link RabbitCluster}; {@code .ci/rabbitmq-cluster.sh}): the work queue
 * a quorum queue with a replica on each node, consumers, publishers and the outbox relay given all three addresses,
 * and each scenario judged by the oracle as {@link Scenarios} judges every chaos scenario (diverged 0, lost 0, the
 * dead letters exactly the poison). Each prints one {@code [failover]} line with its verdict, the recovery time
 * (from the fault to the first message applied after the stall it caused: {@link ClusterFleet.Recovery}) and the
 * duplicates it caused
 * (deliveries beyond the messages sent: nothing in these scenarios is published twice on purpose).
 *
 * <p>Not in the test run ({@code @Tag("failover")}): {@code mvn -B -pl chaos-tests verify -Pfailover}, which
 * {@code .ci/run} runs after the test command against the cluster it starts.
 */
@Tag("failover")
@ExtendWith({MongoExtension.class, RabbitClusterExtension.class})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterFailoverTest {
    private static final Scenarios SCENARIOS = new Scenarios("on a three-node RabbitMQ cluster (RABBITMQ_CLUSTER_URIS)");
    private static final List<String> LINES = new ArrayList<>();
    private static final int POISON = 30;

    @AfterAll
    static void summary() {
        SCENARIOS.print();
        LINES.forEach(System.out::println);
    }

    /** Whatever a scenario did to the cluster, the next one starts on a whole cluster (bounded). */
    @AfterEach
    void whole(RabbitCluster cluster) throws IOException {
        cluster.heal();
        if (cluster.whole()) {
            return;   // asked first: each start below costs a CLI call of seconds even for a running node
        }
        for (int n = 1; n <= 3; n++) {
            cluster.start(n);   // a running node is left as it is
        }
        Awaitility.await("the cluster whole again").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1))
                .until(cluster::whole);
    }

    @Test
    @Order(1)
    void the_work_queue_is_a_quorum_queue_with_a_replica_on_each_node(MongoBackend m, MongoDatabase db,
                                                                     RabbitCluster cluster) throws Exception {
        CachingConnectionFactory connection = cluster.connectionFactory(1);
        try (RabbitBackend node1 = RabbitBackends.rabbit(Optional.of(cluster.uri(1).toString()));
             ChaosRig rig = new ChaosRig(m, node1, connection, db, 0)) {
            assertThat(cluster.ctl(1, "-q", "list_queues", "name", "type")).contains(rig.queue + "\tquorum");
            assertThat(cluster.membersOf(rig.queue)).containsExactlyInAnyOrder(1, 2, 3);
        } finally {
            connection.destroy();
        }
    }

    @Test
    @Order(2)
    void the_leader_of_the_work_queue_killed_mid_run_and_restarted_later_loses_nothing(
            MongoBackend m, MongoDatabase db, RabbitCluster cluster) {
        scenario("leader killed", 21, m, db, cluster, (rig, fleet, ops) -> {
            int leader = cluster.leaderOf(rig.queue);   // asked first: rabbitmqctl takes seconds, the consumers do not wait
            int messages = rig.publish(ops, true, 0, POISON);
            fleet.startOnEachNode();   // after publishing: consumers as fast as the publisher would leave no backlog
            progress(rig, messages, 0.3);   // a backlog of 70 %, and every consumer holding unacked deliveries
            fleet.faultNow();
            cluster.kill(leader);
            // the classic dead-letter queue lives on the node that declared it, the leader's (both are placed on the
            // declaring node): until that node is back, the poison cannot be dead-lettered and its consumers hold it,
            // so the backlog that can be served meanwhile is the rest (counting the poison, the recovery clock took
            // the held poison for a stall that never ends, whenever fewer duplicates than poison were delivered)
            ClusterFleet.Recovery recovery = fleet.awaitRecovery(messages - POISON);
            progress(rig, messages - POISON, 0.7);
            cluster.start(leader);
            return new Fault("ol" + leader + " (leader) SIGKILLed at 30 %, restarted at 70 %", Optional.of(recovery),
                    messages);
        });
    }

    @Test
    @Order(3)
    void a_rolling_restart_while_publishing_and_consuming_loses_nothing(MongoBackend m, MongoDatabase db,
                                                                       RabbitCluster cluster) {
        scenario("rolling restart", 22, m, db, cluster, (rig, fleet, ops) -> {
            List<List<Operation>> parts = split(ops, 4);
            fleet.startOnEachNode();
            int messages = 0;
            for (int n = 1; n <= 3; n++) {
                List<Operation> part = parts.get(n - 1);
                // publishing this part takes a few seconds, while node n stops and starts again
                CompletableFuture<Integer> publishing = CompletableFuture.supplyAsync(() -> publishSlowly(rig, part, 5));
                cluster.stop(n);
                cluster.start(n);
                messages += publishing.get(3, TimeUnit.MINUTES);
            }
            messages += rig.publish(parts.get(3), true, 0, POISON - 15);
            return new Fault("ol1, ol2, ol3 stopped and started in turn, publishing throughout", Optional.empty(),
                    messages);
        });
    }

    @Test
    @Order(4)
    void the_leader_cut_off_from_the_other_two_and_healed_loses_nothing(MongoBackend m, MongoDatabase db,
                                                                        RabbitCluster cluster) {
        scenario("leader partitioned", 23, m, db, cluster, (rig, fleet, ops) -> {
            int leader = cluster.leaderOf(rig.queue);
            int messages = rig.publish(ops, true, 0, POISON);
            fleet.startOnEachNode();   // after publishing: a backlog at the cut, whatever the consumers' pace
            progress(rig, messages, 0.25);
            fleet.faultNow();
            cluster.partition(leader);
            ClusterFleet.Recovery recovery = fleet.awaitRecovery(messages);
            // the majority serves: consumption goes on without the cut node; then the cut heals and it rejoins
            progress(rig, messages, 0.6);
            cluster.heal();
            Awaitility.await("ol" + leader + " back in the cluster after the heal").atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofSeconds(1)).until(cluster::whole);
            return new Fault("ol" + leader + " (leader) cut off at 25 % (pause_minority), healed at 60 %",
                    Optional.of(recovery), messages);
        });
    }

    /**
     * The leader's node killed while the confirming publisher and the outbox relay publish to it: what was sent and
     * never confirmed is sent again (the publisher's re-sends are counted from its log), and the copies the broker
     * had taken after all are absorbed as duplicates (the oracle's verdict).
     */
    @Test
    @Order(5)
    void publishing_through_a_leader_loss_resends_what_was_not_confirmed_and_absorbs_the_duplicates(
            MongoBackend m, MongoDatabase db, RabbitCluster cluster) {
        Logger publisherLog = (Logger) LoggerFactory.getLogger(ConfirmingPublisher.class);
        ListAppender<ILoggingEvent> resends = new ListAppender<>();
        resends.start();
        publisherLog.addAppender(resends);
        try {
            scenario("publishing through a loss", 24, m, db, cluster, (rig, fleet, ops) -> {
                List<List<Operation>> halves = split(ops, 2);
                int leader = cluster.leaderOf(rig.queue);
                MongoCollection<BsonDocument> entries = rig.direct.getCollection("outbox_failover", BsonDocument.class);
                CachingConnectionFactory relayConnection = cluster.connectionFactory(leader);   // on the leader's node
                try (OutboxRelay relay = OutboxRelay.start(entries, ConfirmingPublisher.toQueue(relayConnection, rig.queue,
                        THROUGH_FAILOVER),
                        RelayOptions.ofDefaults().withBatch(50))) {
                    fleet.startOnEachNode();
                    Replay replay = new Replay(halves.get(1));
                    Outbox outbox = Outbox.create(entries, replay.stamper(), OutboxOptions.ofDefaults());
                    CompletableFuture<Integer> publishing = CompletableFuture.supplyAsync(
                            () -> publishSlowly(rig, halves.get(0), POISON));
                    CompletableFuture<Void> recording = CompletableFuture.runAsync(() -> {
                        for (Operation op : halves.get(1)) {
                            outbox.record(op.entity(), seq -> replay.next(op.entity()));
                            if (op.seq() % 40 == 0) {
                                hold(Duration.ofMillis(20));
                            }
                        }
                    });
                    Awaitility.await("a third of the messages handled").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(20))
                            .until(() -> rig.handled() + relay.published() >= ops.size() / 3.0);
                    fleet.faultNow();
                    cluster.kill(leader);
                    ClusterFleet.Recovery recovery = fleet.awaitRecovery(ops.size() + POISON);
                    int messages = publishing.get(3, TimeUnit.MINUTES);
                    recording.get(3, TimeUnit.MINUTES);
                    Awaitility.await("the outbox relayed").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
                            .until(() -> entries.countDocuments() == 0);
                    cluster.start(leader);
                    long resent = resends.list.stream().filter(e -> e.getFormattedMessage().contains("sending them again"))
                            .mapToLong(e -> ((Number) e.getArgumentArray()[0]).longValue()).sum();
                    return new Fault("ol" + leader + " (leader) SIGKILLed while the publisher and the outbox relay"
                            + " publish; " + resent + " re-sent", Optional.of(recovery), messages + relay.published());
                } finally {
                    relayConnection.destroy();
                }
            });
        } finally {
            publisherLog.detachAppender(resends);
        }
    }

    /** What a scenario's fault did: its summary, its recovery if it clocked one, the messages sent in all. */
    record Fault(String text, Optional<ClusterFleet.Recovery> recovery, long sent) {
    }

    interface Body {
        Fault run(ChaosRig rig, ClusterFleet fleet, List<Operation> ops) throws Exception;
    }

    /**
     * One scenario on the cluster: the rig's queues declared through a connection that knows every node (node 1
     * first), two feeders; then the body (which starts a consumer connected to each node first when its fault needs
     * them: {@link ClusterFleet#startOnEachNode()}) and its faults, a drain, and the verdict
     * of {@link Scenarios}, with one {@code [failover]} line.
     */
    private static void scenario(String name, int index, MongoBackend m, MongoDatabase db, RabbitCluster cluster,
                                 Body body) {
        CachingConnectionFactory connection = cluster.connectionFactory(1);
        RabbitBackend node1 = RabbitBackends.rabbit(Optional.of(cluster.uri(1).toString()));
        Fault[] fault = new Fault[1];
        try {
            SCENARIOS.run(name, index, () -> new ChaosRig(m, node1, connection, db, index), (rig, ops) -> {
                try (ClusterFleet fleet = new ClusterFleet(cluster, rig)) {
                    rig.startFeeder("feeder-a");
                    rig.startFeeder("feeder-b");
                    fault[0] = body.run(rig, fleet, ops);
                    fleet.drainAndStop(fault[0].sent());
                    return fault[0].text();
                }
            }, (rig, verdict) -> {
                long duplicates = Math.round(rig.handled()) - fault[0].sent();
                String line = String.format(Locale.ROOT, "[failover] %-26s diverged=%d lost=%d dead_lettered=%d poison=%d"
                                + " %s duplicates=%d", name, verdict.diverged(), verdict.lost(), verdict.deadLettered(),
                        verdict.poison(), fault[0].recovery().map(ClusterFleet.Recovery::text).orElse("recovery_ms=n/a"),
                        duplicates);
                System.out.println(line);
                synchronized (LINES) {
                    LINES.add(line);
                }
                return fault[0].recovery().map(r -> "; recovery " + r.toFirstApplied().toMillis() + " ms").orElse("")
                        + ", " + duplicates + " duplicates";
            });
        } finally {
            connection.destroy();
            node1.close();
        }
    }

    /**
     * How the scenarios' publishers ride through a failover: the defaults (5 attempts, pauses of at most 3 s in all).
     * They gave up during a leader's loss while a re-send went on the channel the broker nacked (RabbitMQ 3.x keeps
     * nacking a channel that met the dead leader); the publisher re-sends on a fresh channel since.
     */
    static final PublisherOptions THROUGH_FAILOVER = PublisherOptions.ofDefaults();

    /** Publishes {@code ops} in chunks of 50 through the rig's confirming publisher, a pause between chunks. */
    private static int publishSlowly(ChaosRig rig, List<Operation> ops, int poison) {
        int messages = 0;
        List<List<Operation>> chunks = split(ops, Math.max(1, ops.size() / 50));
        for (int i = 0; i < chunks.size(); i++) {
            messages += rig.publish(chunks.get(i), true, 0, i == 0 ? poison : 0, THROUGH_FAILOVER);
            hold(Duration.ofMillis(150));
        }
        return messages;
    }

    private static List<List<Operation>> split(List<Operation> ops, int parts) {
        List<List<Operation>> split = new ArrayList<>();
        int size = (ops.size() + parts - 1) / parts;
        for (int from = 0; from < ops.size(); from += size) {
            split.add(ops.subList(from, Math.min(ops.size(), from + size)));
        }
        return split;
    }

    /**
     * The workload's own stamps, handed out again to an outbox in the same order: each entity's ops in seq order, so
     * the outbox records exactly the operations the oracle replays.
     */
    static final class Replay {
        private final Map<String, Deque<Operation>> byEntity = new HashMap<>();

        Replay(List<Operation> ops) {
            ops.forEach(op -> byEntity.computeIfAbsent(op.entity(), e -> new ArrayDeque<>()).add(op));
        }

        dev.orderless.stamp.Stamper stamper() {
            return entity -> byEntity.get(entity).peek().seq();
        }

        synchronized Operation next(String entity) {
            return byEntity.get(entity).poll();
        }
    }
}
