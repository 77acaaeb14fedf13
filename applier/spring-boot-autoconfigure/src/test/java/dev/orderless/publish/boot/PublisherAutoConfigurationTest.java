package dev.orderless.publish.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.orderless.Backoff;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.stamp.Stamper;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * When the publisher's beans are made, without a broker or MongoDB (nothing here connects: the context
 * only wires them). The confirm type decides unless {@code orderless.publisher.enabled} says.
 */
class PublisherAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class,
                    OrderlessPublisherAutoConfiguration.class))
            .withBean(MongoClient.class, () -> MongoClients.create("mongodb://localhost:1"))
            .withPropertyValues("orderless.database=shop", "orderless.consumer.queue=shop.ops");

    @Test
    void an_application_without_confirms_starts_without_a_publisher_or_a_stamper() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(StampingPublisher.class);
            assertThat(context).doesNotHaveBean(Stamper.class);
        });
    }

    @Test
    void correlated_confirms_and_returns_give_the_stamping_publisher() {
        runner.withPropertyValues("spring.rabbitmq.publisher-confirm-type=correlated",
                "spring.rabbitmq.publisher-returns=true").run(context -> {
            assertThat(context).hasSingleBean(StampingPublisher.class);
            assertThat(context).hasSingleBean(Stamper.class);
        });
    }

    @Test
    void every_auto_configuration_is_listed_for_boot_to_find() throws Exception {
        String imports = new String(getClass().getResourceAsStream(
                "/META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports").readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8);
        assertThat(imports.lines()).containsExactlyInAnyOrder("dev.orderless.boot.OrderlessAutoConfiguration",
                "dev.orderless.publish.boot.OrderlessPublisherAutoConfiguration",
                "dev.orderless.outbox.boot.OrderlessOutboxAutoConfiguration",
                "dev.orderless.kafka.boot.OrderlessKafkaAutoConfiguration");
    }

    @Test
    void without_the_producer_artifact_an_application_starts_without_a_publisher() {
        runner.withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader("dev.orderless.publish",
                        "dev.orderless.stamp", "dev.orderless.outbox"))
                .withPropertyValues("spring.rabbitmq.publisher-confirm-type=correlated", "spring.rabbitmq.publisher-returns=true")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("orderlessStampingPublisher"));
    }

    @Test
    void a_publisher_asked_for_without_confirms_fails_the_start_naming_the_properties() {
        runner.withPropertyValues("orderless.publisher.enabled=true").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("spring.rabbitmq.publisher-confirm-type=correlated")
                    .hasMessageContaining("spring.rabbitmq.publisher-returns=true");
        });
    }

    @Test
    void a_publisher_turned_off_is_not_made_even_with_confirms() {
        runner.withPropertyValues("orderless.publisher.enabled=false",
                "spring.rabbitmq.publisher-confirm-type=correlated", "spring.rabbitmq.publisher-returns=true")
                .run(context -> assertThat(context).doesNotHaveBean(StampingPublisher.class));
    }

    @Test
    void the_publisher_backoff_is_set_by_orderless_publisher_backoff_and_what_is_unset_keeps_its_default() {
        PublisherOptions options = OrderlessPublisherAutoConfiguration.options(publisher(
                "orderless.publisher.backoff.initial=50ms", "orderless.publisher.backoff.jitter=0"));

        assertThat(options.backoff()).isEqualTo(new Backoff(Duration.ofMillis(50),
                PublisherOptions.ofDefaults().backoff().max(), 0));
    }

    @Test
    void a_bad_publisher_backoff_fails_the_start_naming_the_property() {
        runner.withPropertyValues("spring.rabbitmq.publisher-confirm-type=correlated",
                "spring.rabbitmq.publisher-returns=true", "orderless.publisher.backoff.max=10ms").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessage("orderless.publisher.backoff.max (PT0.01S) must be at least initial (PT0.2S)");
        });
    }

    /** {@code orderless.publisher.*} bound as Boot binds it. */
    private static OrderlessProperties.Publisher publisher(String... properties) {
        Map<String, String> values = new HashMap<>();
        for (String property : properties) {
            String[] pair = property.split("=", 2);
            values.put(pair[0], pair[1]);
        }
        return new Binder(new MapConfigurationPropertySource(values)).bind("orderless", OrderlessProperties.class)
                .get().publisher();
    }
}
