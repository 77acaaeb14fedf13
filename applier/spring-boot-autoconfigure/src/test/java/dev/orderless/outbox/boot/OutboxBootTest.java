package dev.orderless.outbox.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.apply.Operation;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.outbox.Outbox;
import dev.orderless.publish.boot.OrderlessPublisherAutoConfiguration;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The outbox wired by properties alone: the {@code Outbox} bean records, the relay started with the
 * context publishes to the queue, and the health indicator reports the backlog and the relay. On the
 * embedded broker, or the real RabbitMQ when {@code RABBITMQ_URI} is set (as in CI).
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OutboxBootTest {

    private static ApplicationContextRunner runner(MongoBackend mongo, RabbitBackend rabbit, String queue) {
        String[] user = rabbit.uri().getUserInfo().split(":", 2);
        String path = rabbit.uri().getPath();
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class,
                        OrderlessPublisherAutoConfiguration.class, OrderlessOutboxAutoConfiguration.class))
                .withBean(MongoClient.class, () -> MongoClients.create(mongo.connectionString()), c -> c.setDestroyMethodName("close"))
                .withPropertyValues("spring.rabbitmq.host=" + rabbit.uri().getHost(),
                        "spring.rabbitmq.port=" + rabbit.uri().getPort(), "spring.rabbitmq.username=" + user[0],
                        "spring.rabbitmq.password=" + user[1],
                        "spring.rabbitmq.virtual-host=" + (path == null || path.length() <= 1 ? "/" : path.substring(1)),
                        "spring.rabbitmq.publisher-confirm-type=correlated", "spring.rabbitmq.publisher-returns=true",
                        "orderless.database=" + MongoBackend.freshDatabaseName("boot_outbox"),
                        "orderless.consumer.queue=" + queue, "orderless.outbox.enabled=true");
    }

    @Test
    void properties_alone_give_an_outbox_whose_relay_publishes_and_whose_health_shows_the_backlog(
            MongoBackend mongo, RabbitBackend rabbit, ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("boot-outbox");
        new RabbitAdmin(cf).declareQueue(new Queue(queue, true, false, false));
        try {
            runner(mongo, rabbit, queue).run(context -> {
                assertThat(context).hasNotFailed();
                Outbox outbox = context.getBean(Outbox.class);
                for (int i = 0; i < 50; i++) {
                    String entity = "s" + i % 5;
                    outbox.record(entity, seq -> Operation.delete(entity, seq));
                }
                Awaitility.await("the relay published all 50").atMost(Duration.ofSeconds(30))
                        .until(() -> new RabbitAdmin(cf).getQueueInfo(queue).getMessageCount() == 50);
                HealthIndicator health = context.getBean("orderlessOutboxHealthIndicator", HealthIndicator.class);
                Awaitility.await("the health says the outbox is empty").atMost(Duration.ofSeconds(30))
                        .until(() -> Long.valueOf(0).equals(health.health().getDetails().get("backlog")));
                assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                assertThat(health.health().getDetails()).containsEntry("relay", "RUNNING");
            });
        } finally {
            new RabbitAdmin(cf).deleteQueue(queue);
        }
    }

    @Test
    void a_full_outbox_is_down_in_health_and_a_relay_can_be_left_to_other_applications(
            MongoBackend mongo, RabbitBackend rabbit) {
        runner(mongo, rabbit, "nowhere").withPropertyValues("orderless.outbox.relay.enabled=false",
                "orderless.outbox.max-backlog=1").run(context -> {
                    assertThat(context).doesNotHaveBean(OrderlessOutboxRelay.class);
                    context.getBean(Outbox.class).record("s1", seq -> Operation.delete("s1", seq));
                    HealthIndicator health = context.getBean("orderlessOutboxHealthIndicator", HealthIndicator.class);
                    Awaitility.await("down once full").atMost(Duration.ofSeconds(10))
                            .until(() -> health.health().getStatus().equals(Status.DOWN));
                    assertThat(health.health().getDetails()).containsEntry("relay", "STOPPED").containsEntry("limit", 1L);
                });
    }

    @Test
    void a_bad_outbox_property_fails_the_start_naming_it(MongoBackend mongo, RabbitBackend rabbit) {
        runner(mongo, rabbit, "q").withPropertyValues("orderless.outbox.relay.batch=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("orderless.outbox.relay.batch must be between 1 and 10000, was 0");
        });
        runner(mongo, rabbit, "q").withPropertyValues("orderless.outbox.relay.backoff.jitter=-1").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessage("orderless.outbox.relay.backoff.jitter must be from 0 to 1, was -1.0");
        });
        runner(mongo, rabbit, "q").withPropertyValues("orderless.publisher.window=100").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageStartingWith("orderless.outbox.relay.batch (500) must be at most orderless.publisher.window (100)");
        });
    }

    @Test
    void the_outbox_health_is_switched_off_by_management_health_orderlessoutbox_enabled_false(
            MongoBackend mongo, RabbitBackend rabbit) {
        runner(mongo, rabbit, "nowhere").withPropertyValues("orderless.outbox.relay.enabled=false",
                "management.health.orderlessoutbox.enabled=false").run(context -> assertThat(context).hasNotFailed()
                .hasSingleBean(Outbox.class).doesNotHaveBean("orderlessOutboxHealthIndicator"));
    }

    @Test
    void an_outbox_whose_oldest_entry_waited_its_max_wait_is_down_in_health_saying_why(MongoBackend mongo,
                                                                                      RabbitBackend rabbit) {
        runner(mongo, rabbit, "nowhere").withPropertyValues("orderless.outbox.relay.enabled=false",
                "orderless.compaction.grace=4s").run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(Outbox.class).record("s1", seq -> Operation.delete("s1", seq));
                    HealthIndicator health = context.getBean("orderlessOutboxHealthIndicator", HealthIndicator.class);
                    assertThat(health.health().getDetails()).containsEntry("maxWaitSeconds", 2L);
                    Awaitility.await("down once the entry waited half the grace").atMost(Duration.ofSeconds(15))
                            .until(() -> health.health().getStatus().equals(Status.DOWN));
                    assertThat(health.health().getDetails()).containsEntry("backlog", 1L)
                            .hasEntrySatisfying("waitedTooLong", why -> assertThat(why.toString())
                                    .contains("max-wait is 2 s").contains("beyond the horizon"));
                });
    }

    @Test
    void a_max_wait_not_shorter_than_the_grace_fails_the_start_naming_both(MongoBackend mongo, RabbitBackend rabbit) {
        runner(mongo, rabbit, "q").withPropertyValues("orderless.outbox.max-wait=2h", "orderless.compaction.grace=1h")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("orderless.outbox.max-wait (PT2H) is not shorter than"
                                    + " orderless.compaction.grace (PT1H)");
                });
    }
}
