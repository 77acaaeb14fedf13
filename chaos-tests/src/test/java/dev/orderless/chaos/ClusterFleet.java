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
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * A scenario's consumers on the cluster: each connection knows all three nodes (it connects to the node it was
 * given first, to the next when that one is gone), and they count in the rig's meters, so that the rig's verdict
 * and drain see them. It also clocks recovery: from a fault ({@link #faultNow()}) to the first delivery any of them
 * receives after it (read off the wire, as the client reads it), and to the first message applied after that
 * delivery.
 */
final class ClusterFleet implements AutoCloseable {
    private final RabbitCluster cluster;
    private final ChaosRig rig;
    private final List<CachingConnectionFactory> connections = new ArrayList<>();
    private final List<OperationConsumer> consumers = new ArrayList<>();
    private volatile long faultAt;
    private final AtomicLong firstDeliveryAfter = new AtomicLong();
    private final AtomicLong handledAtDelivery = new AtomicLong();

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
                if (faultAt != 0 && inbound.getMethod() instanceof AMQP.Basic.Deliver
                        && firstDeliveryAfter.compareAndSet(0, System.nanoTime())) {
                    handledAtDelivery.set((long) rig.handled());
                }
            }
        });
        GuardedApplier applier = GuardedApplier.create(rig.direct.getCollection(Enrollment.STUDENTS, BsonDocument.class),
                Enrollment.STUDENT_SCHEMA, ApplierOptions.ofDefaults().withMeters(rig.meters));
        OperationConsumer consumer = OperationConsumer.builder(connection, applier)
                .options(ConsumerOptions.ofDefaults(rig.queue).withConcurrency(threads)
                        .withBackoff(Backoff.of(Duration.ofMillis(50), Duration.ofMillis(500))))
                .container(ClusterFleet::container)
                .meters(rig.meters).start();
        connections.add(connection);
        consumers.add(consumer);
    }

    /** A consumer that lost its node tries the next address every {@link ChaosRig#RECONNECT}, not every 5 s. */
    private static SimpleMessageListenerContainer container() {
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer();
        container.setRecoveryInterval(ChaosRig.RECONNECT.toMillis());
        return container;
    }

    /** The fault happens now: recovery is clocked from here. */
    void faultNow() {
        firstDeliveryAfter.set(0);
        faultAt = System.nanoTime();
    }

    /** What recovery took, from the fault. */
    record Recovery(Duration toFirstDelivery, Duration toFirstApplied) {
        String text() {
            return String.format(java.util.Locale.ROOT, "recovery_ms=%d (first delivery after %d ms)",
                    toFirstApplied.toMillis(), toFirstDelivery.toMillis());
        }
    }

    /**
     * Waits (bounded) for the first delivery after the fault and for a message applied after it. Call it while the
     * queue has messages for the consumers.
     */
    Recovery awaitRecovery() {
        double handledAtFault = rig.handled();
        try {
            Awaitility.await("a delivery after the fault").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(5))
                    .until(() -> firstDeliveryAfter.get() != 0);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("no delivery in 2 minutes after the fault: " + (long) handledAtFault + " messages"
                    + " handled when it began, " + (long) rig.handled() + " now, " + rig.queued(rig.queue)
                    + " ready in '" + rig.queue + "'", e);
        }
        Awaitility.await("a message applied after the first delivery since the fault").atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(2)).until(() -> (long) rig.handled() > handledAtDelivery.get());
        long applied = System.nanoTime();
        return new Recovery(Duration.ofNanos(firstDeliveryAfter.get() - faultAt), Duration.ofNanos(applied - faultAt));
    }

    /**
     * Until the queue is empty and the consumers handled as many messages as were sent ({@code sent}), bounded; then
     * stops them (what they still hold goes back to the queue, where the rig's drain finds it).
     */
    void drainAndStop(long sent) {
        Awaitility.await("the cluster's queue drained").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
                .until(() -> rig.queued(rig.queue) == 0);
        try {
            Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                    .until(() -> rig.handled() >= sent);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // not all handled: what the consumers still hold comes back as they stop, and the rig's drain takes it
        }
        close();
    }

    @Override
    public void close() {
        consumers.forEach(OperationConsumer::close);
        consumers.clear();
        connections.forEach(CachingConnectionFactory::destroy);
        connections.clear();
    }
}
