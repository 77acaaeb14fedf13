package dev.orderless.chaos;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Command;
import com.rabbitmq.client.TrafficListener;
import dev.orderless.Backoff;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.demo.Enrollment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * A scenario's consumers on the cluster: each connection knows all three nodes (it connects to the node it was
 * given first, to the next when that one is gone), and they count in the rig's meters, so that the rig's verdict
 * and drain see them. It also clocks recovery: from a fault ({@link #faultNow()}) to the end of the longest stretch
 * without a delivery to any of them after it (deliveries read off the wire, as the client reads them), and to the
 * first message applied after that.
 */
final class ClusterFleet implements AutoCloseable {
    private final RabbitCluster cluster;
    private final ChaosRig rig;
    private final List<CachingConnectionFactory> connections = new ArrayList<>();
    private final List<OperationConsumer> consumers = new ArrayList<>();
    private volatile long faultAt;
    /** Every delivery read since the fault: when (nanoTime) and the messages handled then. */
    private final java.util.concurrent.ConcurrentLinkedQueue<long[]> deliveries = new java.util.concurrent.ConcurrentLinkedQueue<>();

    ClusterFleet(RabbitCluster cluster, ChaosRig rig) {
        this.cluster = cluster;
        this.rig = rig;
    }

    /** A consumer of {@code threads} threads whose connection tries node {@code first} first. */
    void start(int first, int threads) {
        CachingConnectionFactory connection = cluster.connectionFactory(first);
        connection.getRabbitConnectionFactory().setTrafficListener(new TrafficListener() {
            @Override
            public void write(Command outbound) {
            }

            @Override
            public void read(Command inbound) {
                if (faultAt != 0 && inbound.getMethod() instanceof AMQP.Basic.Deliver) {
                    deliveries.add(new long[] {System.nanoTime(), (long) rig.handled()});
                }
            }
        });
        GuardedApplier applier = GuardedApplier.create(rig.direct.getCollection(Enrollment.STUDENTS, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA, ApplierOptions.ofDefaults().withMeters(rig.meters));
        // as the library says and Boot does: a start that meets the cluster failing over (a queue whose node is cut
        // off: "home node ... down or inaccessible") throws TransientException, and is tried again, bounded
        OperationConsumer[] started = new OperationConsumer[1];
        Awaitility.await("a consumer started on the cluster").atMost(Duration.ofMinutes(2))
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofSeconds(1))
                .ignoreException(dev.orderless.TransientException.class)
                .until(() -> {
                    started[0] = OperationConsumer.builder(connection, applier)
                            .options(ConsumerOptions.ofDefaults(rig.queue).withConcurrency(threads)
                                    .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500))))
                            .container(ClusterFleet::container)
                            .meters(rig.meters).start();
                    return true;
                });
        OperationConsumer consumer = started[0];
        connections.add(connection);
        consumers.add(consumer);
    }

    /** A consumer of two threads connected to each node first: six consumers of the queue. */
    void startOnEachNode() {
        for (int n = 1; n <= 3; n++) {
            start(n, 2);
        }
    }

    /** A consumer that lost its node tries the next address every {@link ChaosRig#RECONNECT}, not every 5 s. */
    private static SimpleMessageListenerContainer container() {
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer();
        container.setRecoveryInterval(ChaosRig.RECONNECT.toMillis());
        return container;
    }

    /** The fault happens now: recovery is clocked from here. */
    void faultNow() {
        deliveries.clear();
        faultAt = System.nanoTime();
    }

    /**
     * What recovery took, from the fault: the longest stretch without a delivery after it (the stall: deliveries the
     * lost node had already sent still arrive for a few milliseconds after a kill, so the first delivery after the
     * fault would say nothing), the first delivery after that stretch, and the first message applied after that.
     */
    record Recovery(Duration stall, Duration toFirstDelivery, Duration toFirstApplied) {
        String text() {
            return String.format(java.util.Locale.ROOT, "recovery_ms=%d (deliveries stalled %d ms, first after it at %d ms)",
                    toFirstApplied.toMillis(), stall.toMillis(), toFirstDelivery.toMillis());
        }
    }

    /** Deliveries after the longest stall before the scenario takes the queue as serving again. */
    private static final int SERVING = 20;
    /** How long after the fault, at least, the stall is looked for (a stall must have begun by then). */
    private static final Duration WATCH = Duration.ofSeconds(3);

    /**
     * Waits (bounded) until the queue serves again after the fault: at least {@link #WATCH} after it, the longest
     * stretch without a delivery since the fault ended, and {@link #SERVING} deliveries followed, one of them after
     * a message applied. Call it while the queue has messages for the consumers: of the {@code sent} messages,
     * some not handled yet (a scenario that published them all before its consumers started has that backlog; one
     * whose consumers kept up with its publisher may have none, and then nothing would be delivered after the fault).
     */
    Recovery awaitRecovery(long sent) {
        double handledAtFault = rig.handled();
        if (handledAtFault >= sent) {
            throw new AssertionError("no backlog at the fault: all " + sent + " messages were handled before it, so no"
                    + " delivery after it can clock a recovery; publish before the consumers start");
        }
        Recovery[] found = new Recovery[1];
        try {
            Awaitility.await("the queue serving again after the fault").atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(50)).until(() -> (found[0] = recovered(sent)) != null);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("the queue did not serve again in 2 minutes after the fault: " + deliveries.size()
                    + " deliveries since, " + (long) handledAtFault + " messages handled when it began, "
                    + (long) rig.handled() + " now, " + rig.queued(rig.queue) + " ready in '" + rig.queue + "'", e);
        }
        return found[0];
    }

    /** The recovery, once the stall is over: null while it may go on (messages left and none delivered for longest). */
    private Recovery recovered(long sent) {
        long now = System.nanoTime();
        if (now - faultAt < WATCH.toNanos()) {
            return null;
        }
        List<long[]> seen = new ArrayList<>(deliveries);
        long longest = -1;
        int end = -1;   // the delivery that ended the longest stretch
        long previous = faultAt;
        for (int i = 0; i < seen.size(); i++) {
            if (seen.get(i)[1] >= sent) {
                break;   // the backlog was handled: later deliveries are redeliveries, after a quiet that is no stall
            }
            long gap = seen.get(i)[0] - previous;
            if (gap > longest) {
                longest = gap;
                end = i;
            }
            previous = seen.get(i)[0];
        }
        boolean backlog = rig.handled() < sent;   // without one, the quiet since the last delivery is no stall
        if (end < 0 || (backlog && (now - previous >= longest || seen.size() - end < SERVING))) {
            return null;   // still stalled, or not serving long enough to tell
        }
        long handledThen = seen.get(end)[1];
        for (int i = end + 1; i < seen.size(); i++) {
            if (seen.get(i)[1] > handledThen) {
                return new Recovery(Duration.ofNanos(longest), Duration.ofNanos(seen.get(end)[0] - faultAt),
                        Duration.ofNanos(seen.get(i)[0] - faultAt));
            }
        }
        if (!backlog) {   // the backlog ended with that delivery: its apply came after it, unseen
            Duration at = Duration.ofNanos(seen.get(end)[0] - faultAt);
            return new Recovery(Duration.ofNanos(longest), at, at);
        }
        return null;
    }

    /**
     * Until the queue is empty and the consumers handled as many messages as were sent ({@code sent}), bounded; then
     * stops them. If some stay unhandled a minute after the queue showed none ready (held unacked by a consumer, or
     * checked out to one the broker has not yet seen go), it says so with the queue's counts as the nodes report
     * them, stops the consumers (what they held goes back to the queue) and drains it with fresh ones, bounded: the
     * rig's drain and verdict then count anything still missing.
     */
    void drainAndStop(long sent) {
        Awaitility.await("the cluster's queue drained").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
                .until(() -> rig.queued(rig.queue) == 0);
        try {
            Awaitility.await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(50))
                    .until(() -> rig.handled() >= sent);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            System.out.println("[failover] " + (sent - (long) rig.handled()) + " of " + sent + " messages not handled a"
                    + " minute after '" + rig.queue + "' showed none ready; name, ready, unacked, consumers: "
                    + queueCounts() + "; the consumers stop and fresh ones drain it");
            close();
            startOnEachNode();
            try {
                Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100))
                        .until(() -> rig.handled() >= sent && rig.queued(rig.queue) == 0);
            } catch (org.awaitility.core.ConditionTimeoutException again) {
                // what is still missing is counted by the rig's drain and verdict
            }
        }
        close();
        // handled counts the duplicates too, so it can reach sent while a consumer still holds messages unacked: they
        // come back as it stops, and the rig's drain (which starts no consumer first) would wait for them in vain
        for (int round = 1; round <= 3 && !stayedEmpty(); round++) {
            System.out.println("[failover] " + rig.queued(rig.queue) + " message(s) back in '" + rig.queue + "' as the"
                    + " consumers stopped (held unacked); fresh consumers take them, round " + round);
            startOnEachNode();
            try {
                Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100))
                        .until(() -> rig.queued(rig.queue) == 0);
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                // the rig's drain and verdict count what is still there
            }
            close();
        }
    }

    /** Whether the queue shows none ready for a second after the consumers stopped (bounded: 10 s). */
    private boolean stayedEmpty() {
        try {
            Awaitility.await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                    .until(() -> rig.queued(rig.queue) == 0);
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
        }
    }

    /** The work queue's ready, unacked and consumer counts as each node that answers reports them. */
    private String queueCounts() {
        StringBuilder counts = new StringBuilder();
        for (int n = 1; n <= 3; n++) {
            try {
                String out = cluster.ctl(n, "-q", "list_queues", "name", "messages_ready", "messages_unacknowledged",
                        "consumers");
                counts.append("ol").append(n).append(": ").append(out.lines().filter(l -> l.startsWith(rig.queue + "\t"))
                        .findFirst().orElse("not listed")).append("; ");
            } catch (java.io.IOException e) {
                counts.append("ol").append(n).append(": ").append(e.getMessage()).append("; ");
            }
        }
        return counts.toString().replace('\t', ' ');
    }

    @Override
    public void close() {
        consumers.forEach(OperationConsumer::close);
        consumers.clear();
        connections.forEach(CachingConnectionFactory::destroy);
        connections.clear();
    }
}
