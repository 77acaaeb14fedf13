package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.boot.internal.RunningConsumer;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The Boot bean's watch over its consumer, whatever the protocol: a consumer that stops consuming on its own is
 * closed and started again, and says so meanwhile. (The consumer here is a stand-in whose running state the test
 * sets; what is real is the bean, its queues on the broker and its schedule.)
 */
@ExtendWith(RabbitExtension.class)
class ConsumerWatchTest {

    /** A consumer that runs until the test says it stopped. */
    static final class StandIn implements RunningConsumer {
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicBoolean closed = new AtomicBoolean();

        @Override
        public boolean isRunning() {
            return running.get() && !closed.get();
        }

        final java.util.concurrent.atomic.AtomicReference<String> waitingFor = new java.util.concurrent.atomic.AtomicReference<>();

        @Override
        public int retrying() {
            return 0;
        }

        @Override
        public Optional<String> waitingFor() {
            return Optional.ofNullable(waitingFor.get());
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    @Test
    void a_consumer_that_stops_consuming_on_its_own_is_closed_and_started_again(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("watch");
        List<StandIn> started = new CopyOnWriteArrayList<>();
        OrderlessConsumer bean = new OrderlessConsumer(cf, ConsumerOptions.ofDefaults(queue),
                OrderlessProperties.QueueType.AUTO, OrderlessProperties.Protocol.AMQP_0_9_1, Optional.empty(), () -> {
                    StandIn consumer = new StandIn();
                    started.add(consumer);
                    return consumer;
                });
        bean.watchEvery(Duration.ofMillis(200));   // the schedule's length is not what is tested
        try {
            bean.start();
            assertThat(started).hasSize(1);
            assertThat(bean.isConsuming()).isTrue();

            started.get(0).running.set(false);   // its thread or link ended for good
            assertThat(bean.isConsuming()).as("health sees it at once").isFalse();

            Awaitility.await("the watch starts another").atMost(Duration.ofSeconds(10))
                    .until(() -> started.size() == 2 && bean.isConsuming());
            assertThat(started.get(0).closed).as("the stopped one was closed").isTrue();
            assertThat(bean.waitingFor()).isEmpty();
        } finally {
            bean.stop();
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
        assertThat(started.get(1).closed).as("stop closes the running one").isTrue();
    }

    @Test
    void a_consumer_that_must_wait_for_something_first_starts_once_it_has_and_says_what_it_waits_for_meanwhile(
            ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("before");
        List<StandIn> started = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicReference<String> first = new java.util.concurrent.atomic.AtomicReference<>(
                "the history's start to be decided; it waits for MongoDB");
        OrderlessConsumer bean = new OrderlessConsumer(cf, ConsumerOptions.ofDefaults(queue),
                OrderlessProperties.QueueType.AUTO, OrderlessProperties.Protocol.AMQP_0_9_1, Optional.empty(), () -> {
                    StandIn consumer = new StandIn();
                    started.add(consumer);
                    return consumer;
                }, () -> Optional.ofNullable(first.get()));
        bean.watchEvery(Duration.ofMillis(200));   // the schedule's length is not what is tested
        try {
            bean.start();
            assertThat(started).as("not started before").isEmpty();
            assertThat(bean.isConsuming()).isFalse();
            assertThat(bean.waitingFor()).contains("the history's start to be decided; it waits for MongoDB");

            first.set(null);   // decided

            Awaitility.await("the watch starts it").atMost(Duration.ofSeconds(10)).until(bean::isConsuming);
            assertThat(started).hasSize(1);
            assertThat(bean.waitingFor()).isEmpty();
        } finally {
            bean.stop();
            new RabbitAdmin(cf).deleteQueue(queue);
            new RabbitAdmin(cf).deleteQueue(queue + ".dlq");
        }
    }

    @Test
    void a_consumer_that_waits_for_mongodb_is_down_in_health_saying_so_and_up_once_mongodb_answers(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("mongowait");
        StandIn consumer = new StandIn();
        OrderlessConsumer bean = new OrderlessConsumer(cf, ConsumerOptions.ofDefaults(queue),
                OrderlessProperties.QueueType.AUTO, OrderlessProperties.Protocol.AMQP_0_9_1, Optional.empty(), () -> consumer);
        bean.start();
        try {
            OrderlessConsumerHealth health = new OrderlessConsumerHealth(bean);
            assertThat(health.health().getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.UP);

            consumer.waitingFor.set("MongoDB: apply to students 's-1' seq 7: MongoDB at db.example:27017 unavailable");

            assertThat(health.health().getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.DOWN);
            assertThat(health.health().getDetails()).containsEntry("waitingFor",
                    "MongoDB: apply to students 's-1' seq 7: MongoDB at db.example:27017 unavailable");
            consumer.waitingFor.set(null);
            assertThat(health.health().getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.UP);
        } finally {
            bean.stop();
        }
    }
}
