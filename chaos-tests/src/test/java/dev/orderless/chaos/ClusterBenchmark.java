package dev.orderless.chaos;

import static dev.orderless.chaos.Scenarios.progress;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import dev.orderless.testing.MongoExtension;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * What the cluster costs and what a leader's loss costs, from one run on the three-node cluster
 * ({@link RabbitCluster}): the same workload published (confirmed) into the work queue and consumed by the same
 * consumers (three, of two threads, one connected to each node first), once with the queue's three replicas and once
 * with one (the same declaration, then its replicas on nodes 2 and 3 removed with {@code rabbitmq-queues
 * delete_member}, so only the replication differs), as msg/s and a ratio; then the leader SIGKILLed with a backlog:
 * the recovery (from the kill to the first message applied after the queue served again) and the duplicates it caused
 * (deliveries beyond the messages sent). One table, then one {@code BENCH} line; no figure is asserted. Runs in the
 * failover profile (so CI prints it) and alone:
 * {@code mvn -B -pl chaos-tests verify -Pbench -Dtest=ClusterBenchmark}, with the cluster's settings.
 */
@ExtendWith({MongoExtension.class, RabbitClusterExtension.class})
class ClusterBenchmark {
    private static final int OPS = Integer.getInteger("orderless.cluster.bench.ops", 1500);

    @Test
    void run(MongoBackend m, MongoDatabase db, RabbitCluster cluster) throws Exception {
        Measured three = throughput(m, db, cluster, 3, 31);
        db.drop();   // each part on students of its own: the oracle replays one workload
        Measured one = throughput(m, db, cluster, 1, 32);
        db.drop();
        Killed killed = leaderKilled(m, db, cluster, 33);
        System.out.println();
        System.out.println("[bench] three-node RabbitMQ cluster (Debian's 3.x, one machine), " + OPS + " ops each");
        System.out.printf(Locale.ROOT, "[bench] %-36s %14s %18s%n", "work queue", "publish msg/s", "consume+apply msg/s");
        System.out.printf(Locale.ROOT, "[bench] %-36s %14.0f %18.0f%n", "quorum queue, 3 replicas", three.publish, three.consume);
        System.out.printf(Locale.ROOT, "[bench] %-36s %14.0f %18.0f%n", "quorum queue, 1 replica", one.publish, one.consume);
        System.out.printf(Locale.ROOT, "[bench] %-36s %14.2f %18.2f%n", "ratio 3 replicas / 1", three.publish / one.publish,
                three.consume / one.consume);
        System.out.printf(Locale.ROOT, "[bench] leader SIGKILLed at 30 %% of %d messages: recovery %d ms (deliveries"
                        + " stalled %d ms), duplicates %d, diverged %d, lost %d%n", killed.messages, killed.recovery.toFirstApplied().toMillis(),
                killed.recovery.stall().toMillis(), killed.duplicates, killed.diverged, killed.lost);
        System.out.printf(Locale.ROOT, "BENCH cluster_publish_3_over_1=%.2f cluster_consume_3_over_1=%.2f"
                        + " leader_kill_recovery_ms=%d leader_kill_duplicates=%d%n", three.publish / one.publish,
                three.consume / one.consume, killed.recovery.toFirstApplied().toMillis(), killed.duplicates);
    }

    record Measured(double publish, double consume) {
    }

    record Killed(int messages, ClusterFleet.Recovery recovery, long duplicates, long diverged, long lost) {
    }

    private static Measured throughput(MongoBackend m, MongoDatabase db, RabbitCluster cluster, int replicas, long seed)
            throws Exception {
        CachingConnectionFactory connection = cluster.connectionFactory(1);
        try (RabbitBackend node1 = RabbitBackends.rabbit(Optional.of(cluster.uri(1).toString()));
             ChaosRig rig = new ChaosRig(m, node1, connection, db, seed)) {
            if (replicas == 1) {
                for (int n = 2; n <= 3; n++) {
                    int node = n;
                    // Ra takes one membership change at a time: the second is refused (cluster_change_not_permitted)
                    // until the first is committed, so each is tried again, bounded
                    Awaitility.await("ol" + n + "'s replica removed").atMost(Duration.ofMinutes(1))
                            .pollInterval(Duration.ofSeconds(1)).ignoreExceptions().until(() -> {
                                if (cluster.membersOf(rig.queue).contains(node)) {
                                    cluster.queues(1, "delete_member", rig.queue, "ol" + node + "@ol" + node);
                                }
                                return !cluster.membersOf(rig.queue).contains(node);
                            });
                }
            }
            List<Operation> ops = rig.workload(OPS, 300);
            long t0 = System.nanoTime();
            int messages = rig.publish(ops, false, 0, 0);
            double publish = messages / ((System.nanoTime() - t0) / 1e9);
            try (ClusterFleet fleet = new ClusterFleet(cluster, rig)) {
                long t1 = System.nanoTime();
                for (int n = 1; n <= 3; n++) {
                    fleet.start(n, 2);
                }
                Awaitility.await("every message consumed").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(10))
                        .until(() -> rig.handled() >= messages);
                double consume = messages / ((System.nanoTime() - t1) / 1e9);
                return new Measured(publish, consume);
            }
        } finally {
            connection.destroy();
        }
    }

    private static Killed leaderKilled(MongoBackend m, MongoDatabase db, RabbitCluster cluster, long seed)
            throws Exception {
        CachingConnectionFactory connection = cluster.connectionFactory(1);
        try (RabbitBackend node1 = RabbitBackends.rabbit(Optional.of(cluster.uri(1).toString()));
             ChaosRig rig = new ChaosRig(m, node1, connection, db, seed)) {
            List<Operation> ops = rig.workload(OPS, 300);
            rig.startFeeder("feeder-a");
            int messages = rig.publish(ops, true, 0, 0);
            ClusterFleet.Recovery recovery;
            int leader = cluster.leaderOf(rig.queue);   // before the consumers start: rabbitmqctl takes seconds
            try (ClusterFleet fleet = new ClusterFleet(cluster, rig)) {
                fleet.startOnEachNode();
                progress(rig, messages, 0.3);
                fleet.faultNow();
                cluster.kill(leader);
                recovery = fleet.awaitRecovery(messages);
                fleet.drainAndStop(messages);
                cluster.start(leader);
            }
            rig.drain();
            ChaosRig.Verdict verdict = rig.verify(ops);
            return new Killed(messages, recovery, Math.round(rig.handled()) - messages, verdict.diverged(), verdict.lost());
        } finally {
            connection.destroy();
            for (int n = 1; n <= 3 && !cluster.whole(); n++) {
                cluster.start(n);   // a running node is left as it is
            }
        }
    }
}
