package dev.orderless.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.orderless.Backoff;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** When the auto-configuration steps in, and how a bad configuration fails the start. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class OrderlessAutoConfigurationTest {
    private ApplicationContextRunner runner;
    private MongoBackend mongo;

    @BeforeEach
    void setUp(MongoBackend mongo, RabbitBackend rabbit) {
        this.mongo = mongo;
        // each context gets clients of its own: it closes them when it closes
        runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory(rabbit.uri()));
    }

    @Test
    void without_a_schema_bean_it_stays_out_of_the_way() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(GuardedApplier.class));
    }

    @Test
    void a_missing_database_fails_the_start_naming_the_property() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA).withPropertyValues("orderless.collection=e")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("orderless.database is not set: name the MongoDB database"));
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=", "orderless.collection=e")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("orderless.database is empty: name the MongoDB database"));
    }

    @Test
    void a_view_property_without_any_view_bean_fails_the_start_naming_it() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e",
                        "orderless.view.classes.commit-every=50")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
                        "orderless.view.classes.* configures no view: there is no OrderlessView bean; declare one named"
                                + " 'classes' (see OrderlessView)"));
    }

    @Test
    void orderless_writes_with_majority_unless_told_to_take_the_clients_write_concern() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e")
                .run(context -> assertThat(context.getBean(GuardedApplier.class).reads().getWriteConcern())
                        .isEqualTo(com.mongodb.WriteConcern.MAJORITY));
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.write-concern=client")
                .run(context -> assertThat(context.getBean(GuardedApplier.class).reads().getWriteConcern())
                        .isEqualTo(com.mongodb.WriteConcern.ACKNOWLEDGED));
    }

    @Test
    void majority_keeps_the_wtimeout_and_journal_the_clients_uri_sets() {
        OrderlessProperties properties = new org.springframework.boot.context.properties.bind.Binder(
                new org.springframework.boot.context.properties.source.MapConfigurationPropertySource(
                        Map.of("orderless.database", "d")))
                .bind("orderless", OrderlessProperties.class).get();
        try (com.mongodb.client.MongoClient client = com.mongodb.client.MongoClients.create(
                "mongodb://127.0.0.1:1/?w=1&wtimeoutMS=5000&journal=true&serverSelectionTimeoutMS=100")) {
            com.mongodb.WriteConcern concern = properties.database(client).getWriteConcern();

            assertThat(concern.getWString()).isEqualTo("majority");
            assertThat(concern.getWTimeout(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(5000);
            assertThat(concern.getJournal()).isTrue();
        }
    }

    @Test
    void the_envelope_of_a_strict_consumer_refuses_members_it_does_not_define() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e",
                        "orderless.consumer.envelope.unknown-members=refuse")
                .run(context -> assertThat(context.getBean(OrderlessProperties.class).consumer()
                        .envelope(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()).unknownMembers())
                        .isEqualTo(dev.orderless.message.Envelope.UnknownMembers.REFUSE));
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e",
                        "orderless.consumer.envelope.unknown-members=sometimes")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("orderless.consumer.envelope.unknown-members"));
    }

    @Test
    void an_out_of_range_consumer_property_fails_the_start_naming_it() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.consumer.prefetch=5000")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
                        "orderless.consumer.prefetch must be between 1 and 1000, was 5000"));
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.consumer.concurrency=0")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
                        "orderless.consumer.concurrency must be between 1 and 256, was 0"));
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.consumer.backoff.jitter=2")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
                        "orderless.consumer.backoff.jitter must be from 0 to 1, was 2.0"));
    }

    @Test
    void a_batch_larger_than_the_prefetch_fails_the_start_naming_both() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.consumer.batch-size=60", "orderless.consumer.prefetch=10")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessageStartingWith(
                        "orderless.consumer.batch-size (60) must be at most prefetch (10): a consumer cannot take more"
                                + " messages than the broker lets it hold; raise the prefetch or lower the batch size"));
    }

    @Test
    void the_consumer_properties_set_the_consumer_options_and_what_is_unset_keeps_its_default() {
        ConsumerOptions options = consumerOptions("orderless.consumer.queue=q", "orderless.consumer.concurrency=3",
                "orderless.consumer.backoff.initial=1s", "orderless.consumer.backoff.jitter=0");

        assertThat(options.concurrency()).isEqualTo(3);
        assertThat(options.deadLetterQueue()).isEqualTo(ConsumerOptions.defaultDeadLetterQueue("q"));
        assertThat(options.backoff()).isEqualTo(new Backoff(Duration.ofSeconds(1),
                ConsumerOptions.ofDefaults("q").backoff().max(), 0));
    }

    @Test
    void an_initial_backoff_above_the_default_max_raises_the_max_instead_of_failing_on_a_property_never_set() {
        ConsumerOptions options = consumerOptions("orderless.consumer.queue=q", "orderless.consumer.backoff.initial=10s");

        assertThat(options.backoff().initial()).isEqualTo(Duration.ofSeconds(10));
        assertThat(options.backoff().max()).isEqualTo(Duration.ofSeconds(10));
    }

    /** {@code orderless.consumer.*} bound as Boot binds it, without Spring's listener properties. */
    private static ConsumerOptions consumerOptions(String... properties) {
        Map<String, String> values = new HashMap<>();
        for (String property : properties) {
            String[] pair = property.split("=", 2);
            values.put(pair[0], pair[1]);
        }
        return new Binder(new MapConfigurationPropertySource(values)).bind("orderless", OrderlessProperties.class)
                .get().consumer().options(Optional.empty(), Optional.empty(), Optional.empty());
    }

    @Test
    void without_a_queue_there_is_an_applier_and_no_consumer() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(GuardedApplier.class)
                        .doesNotHaveBean(OrderlessConsumer.class));
    }

    @Test
    void a_view_property_out_of_range_or_for_no_view_fails_the_start_naming_it() {
        ApplicationContextRunner withView = runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withBean(OrderlessView.class, () -> new OrderlessView("rosters", "students", "rosters", Histories.SCHEMA,
                        (doc, v) -> java.util.List.of()))
                .withPropertyValues("orderless.database=d", "orderless.collection=e");

        withView.withPropertyValues("orderless.view.rosters.commit-every=0").run(context -> assertThat(context)
                .hasFailed().getFailure().rootCause().hasMessage("orderless.view.rosters.commit-every must be at least 1, was 0"));
        withView.withPropertyValues("orderless.view.rosters.segments=4", "orderless.view.rosters.workers=5")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
                        "orderless.view.rosters.workers must be between 1 and segments (4), was 5"));
        withView.withPropertyValues("orderless.view.rosters.lease-ttl=50ms").run(context -> assertThat(context)
                .hasFailed().getFailure().rootCause().hasMessage("orderless.view.rosters.lease-ttl must be at least"
                        + " 100 ms, was PT0.05S"));
        withView.withPropertyValues("orderless.view.roster.commit-every=5").run(context -> assertThat(context)
                .hasFailed().getFailure().rootCause().hasMessage("orderless.view.roster.* configures no view: the"
                        + " OrderlessView beans are named [rosters]"));
    }

    @Test
    void compaction_without_a_grace_fails_the_start_naming_it() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.compaction.enabled=true")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessageStartingWith(
                        "orderless.compaction.grace must be a positive duration, and is not set (compaction is enabled)"));
    }

    @Test
    void a_dead_letter_ttl_longer_than_the_compaction_grace_fails_the_start_naming_both() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.compaction.enabled=true", "orderless.compaction.grace=7d",
                        "orderless.consumer.dead-letter-ttl=8d")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(
                        "orderless.consumer.dead-letter-ttl (PT192H) is longer than orderless.compaction.grace (PT168H):"
                                + " a letter replayed after the grace could only end beyond_horizon; set the TTL to at"
                                + " most the grace"));
    }

    @Test
    void a_dead_letter_ttl_past_rabbitmqs_limit_fails_the_start_naming_it() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.consumer.dead-letter-ttl=50d")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("orderless.consumer.dead-letter-ttl must be at most 4294967295 ms"));
    }

    @Test
    void the_grace_bounds_the_dead_letter_ttl_also_where_another_application_compacts() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.compaction.grace=7d", "orderless.consumer.dead-letter-ttl=8d")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("is longer than orderless.compaction.grace"));
    }

    @Test
    void two_application_contexts_run_one_compaction_pass_per_interval_between_them() {
        String database = MongoBackend.freshDatabaseName("compaction");
        ApplicationContextRunner app = runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=" + database, "orderless.collection=entities",
                        "orderless.compaction.enabled=true", "orderless.compaction.interval=1h",
                        "orderless.compaction.grace=10m");

        app.run(first -> app.run(second -> {
            OrderlessCompaction a = first.getBean(OrderlessCompaction.class);
            OrderlessCompaction b = second.getBean(OrderlessCompaction.class);
            Awaitility.await("one pass").atMost(Duration.ofSeconds(30)).until(() -> a.passes() + b.passes() == 1);
            Awaitility.await("and no second within the hour").during(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(5)).until(() -> a.passes() + b.passes() == 1);
            assertThat(a.failures() + b.failures()).isZero();
        }));
    }

    @Test
    void a_spring_listener_prefetch_below_the_batch_makes_the_batch_smaller() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "orderless.consumer.queue-type=classic", "spring.rabbitmq.listener.simple.prefetch=10")
                .run(context -> assertThat(context.getBean(OrderlessConsumer.class).options()).satisfies(options -> {
                    assertThat(options.prefetch()).isEqualTo(10);
                    assertThat(options.batchSize()).isEqualTo(10);
                }));
    }

    @Test
    void a_misspelt_property_fails_the_start() {
        runner.withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.concurency=2")
                .run(context -> assertThat(context).hasFailed().getFailure().hasStackTraceContaining("concurency"));
    }

    @Test
    void two_schemas_and_none_primary_fail_the_start_saying_which_to_mark() {
        runner.withBean("entities", CollectionSchema.class, () -> Histories.SCHEMA)
                .withBean("view", CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageStartingWith("several CollectionSchema beans and none of them @Primary"));
    }

    @Test
    void the_application_starts_while_the_broker_is_down_and_its_consumer_says_so() throws Exception {
        int closed = closedPort();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory("127.0.0.1", closed))
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    OrderlessConsumerHealth health = context.getBean(OrderlessConsumerHealth.class);
                    assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
                    assertThat(String.valueOf(health.health().getDetails().get("waitingFor")))
                            .startsWith("the broker does not answer");
                });
    }

    @Test
    void a_health_indicator_turned_off_by_management_health_is_not_there() throws Exception {
        int closed = closedPort();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OrderlessAutoConfiguration.class))
                .withBean(MongoClient.class, mongo::newClient)
                .withBean(ConnectionFactory.class, () -> new CachingConnectionFactory("127.0.0.1", closed))
                .withBean(CollectionSchema.class, () -> Histories.SCHEMA)
                .withPropertyValues("orderless.database=d", "orderless.collection=e", "orderless.consumer.queue=q",
                        "management.health.orderlessconsumer.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(OrderlessConsumer.class)
                        .doesNotHaveBean(OrderlessConsumerHealth.class));
    }

    private static int closedPort() throws java.io.IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
