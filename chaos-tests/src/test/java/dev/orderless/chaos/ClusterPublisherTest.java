package dev.orderless.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.orderless.Backoff;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The confirming publisher through a quorum queue's leader loss on the three-node cluster ({@link RabbitCluster}),
 * forced in order: the leader's node killed while a second replica is stopped, so that no new leader can be elected
 * while the publisher's first publish meets the dead one; then the replica started again. RabbitMQ 3.x nacks every
 * later publish on the channel that met the dead leader, so the publisher must re-send on another channel. In the
 * failover profile ({@code mvn -B -pl chaos-tests verify -Pfailover}).
 */
@Tag("failover")
@ExtendWith(RabbitClusterExtension.class)
class ClusterPublisherTest {

    @AfterEach
    void whole(RabbitCluster cluster) throws Exception {
        if (cluster.whole()) {
            return;
        }
        for (int n = 1; n <= 3; n++) {
            cluster.start(n);   // a running node is left as it is
        }
        Awaitility.await("the cluster whole again").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1))
                .until(cluster::whole);
    }

    @Test
    void a_publisher_nacked_by_a_channel_that_met_the_dead_leader_is_taken_on_a_fresh_channel_once_a_leader_serves(
            RabbitCluster cluster) throws Exception {
        String queue = RabbitExtension.uniqueQueue("leader-loss");
        CachingConnectionFactory declaring = cluster.nodeConnectionFactory(1);
        Logger publisherLog = (Logger) LoggerFactory.getLogger(ConfirmingPublisher.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        publisherLog.addAppender(events);
        CachingConnectionFactory publishing = null;
        try {
            new RabbitAdmin(declaring).declareQueue(QueueBuilder.durable(queue).quorum().build());
            int leader = cluster.leaderOf(queue);
            int via = leader % 3 + 1;
            int other = 6 - leader - via;
            cluster.stopReplica(other, queue);
            cluster.kill(leader);   // one replica of three left: no leader until the stopped one is back

            // a connection of its own: its channel's first publish to the queue meets the dead leader
            publishing = cluster.nodeConnectionFactory(via);
            ConfirmingPublisher publisher = ConfirmingPublisher.toQueue(publishing, queue, PublisherOptions.ofDefaults()
                    .withMaxAttempts(40).withBackoff(Backoff.fixed(Duration.ofMillis(500)))
                    .withConfirmTimeout(Duration.ofSeconds(5)));
            CompletableFuture<Void> publish = CompletableFuture.runAsync(
                    () -> publisher.publishRaw(List.of("{}".getBytes(StandardCharsets.UTF_8))));
            Awaitility.await("the broker nacked the first publish").atMost(Duration.ofMinutes(1))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> List.copyOf(events.list).stream().anyMatch(e -> e.getFormattedMessage().contains("nacked")));

            cluster.restartReplica(other, queue);   // two replicas of three: a leader is elected on ol{via} or ol{other}

            publish.get(90, TimeUnit.SECONDS);   // taken, not PublishFailedException after every attempt nacked
            assertThat(new RabbitAdmin(publishing).getQueueInfo(queue).getMessageCount()).isEqualTo(1);
        } finally {
            publisherLog.detachAppender(events);
            declaring.destroy();
            if (publishing != null) {
                publishing.destroy();
            }
        }
    }
}
