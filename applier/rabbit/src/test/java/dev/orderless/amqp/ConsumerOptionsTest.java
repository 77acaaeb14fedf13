package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.broker.QueueTopology;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.time.Duration;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/** A bad configuration fails at start-up, saying what to change. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsumerOptionsTest {

    @Test
    void the_defaults_bound_the_prefetch_well_below_spring_amqps_250() {
        ConsumerOptions options = ConsumerOptions.ofDefaults("q");

        assertThat(options.prefetch()).isEqualTo(100);
        assertThat(options.deadLetterQueue()).isEqualTo("q.dlq").isEqualTo(ConsumerOptions.defaultDeadLetterQueue("q"));
    }

    @Test
    void the_default_backoff_doubles_from_100_ms_to_5_s_with_half_of_each_pause_random() {
        assertThat(ConsumerOptions.ofDefaults("q").backoff())
                .isEqualTo(new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), 0.5));
    }

    @Test
    void out_of_range_values_are_refused_naming_the_parameter() {
        ConsumerOptions options = ConsumerOptions.ofDefaults("q");

        assertThatThrownBy(() -> options.withConcurrency(0)).isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("consumer options: concurrency must be between 1 and 256, was 0");
        assertThatThrownBy(() -> options.withPrefetch(5000)).hasMessageContaining("prefetch must be between 1 and 1000");
        assertThatThrownBy(() -> options.withDeadLetterQueue("q")).hasMessageContaining("deadLetterQueue must differ");
        assertThatThrownBy(() -> options.withBatch(50, Duration.ofMillis(20)).withPrefetch(10))
                .hasMessageContaining("batchSize (50) must be at most prefetch (10)");
        assertThatThrownBy(() -> options.withBatch(0, Duration.ofMillis(20))).hasMessageContaining("batchSize must be between");
    }

    @Test
    void a_refused_value_carries_its_setting_apart_from_the_problem() {
        assertThatThrownBy(() -> ConsumerOptions.ofDefaults("q").withMaxHold(Duration.ZERO))
                .isInstanceOfSatisfying(InvalidConfigurationException.class, e -> {
                    assertThat(e.setting()).contains("maxHold");
                    assertThat(e.problem()).isEqualTo("must be a positive duration, was PT0S");
                });
    }

    @Test
    void a_batch_raises_the_prefetch_so_the_next_batch_is_on_its_way() {
        ConsumerOptions batched = ConsumerOptions.ofDefaults("q").perMessage().withBatch(30, Duration.ofMillis(20));

        assertThat(batched.batchSize()).isEqualTo(30);
        assertThat(batched.prefetch()).isEqualTo(60);
    }

    @Test
    void the_defaults_take_batches_of_fifty_and_per_message_is_one_call_away() {
        assertThat(ConsumerOptions.ofDefaults("q")).satisfies(defaults -> {
            assertThat(defaults.batchSize()).isEqualTo(50);
            assertThat(defaults.prefetch()).isEqualTo(100);
        });
        assertThat(ConsumerOptions.ofDefaults("q").perMessage()).satisfies(one -> {
            assertThat(one.batchSize()).isEqualTo(1);
            assertThat(one.prefetch()).isEqualTo(10);
        });
    }

    @Test
    void starting_on_a_queue_that_does_not_exist_fails_with_how_to_declare_it(ConnectionFactory cf, MongoDatabase db) {
        GuardedApplier applier = GuardedApplier.create(db.getCollection("e", BsonDocument.class), Histories.SCHEMA);
        String queue = RabbitExtension.uniqueQueue("missing");

        assertThatThrownBy(() -> OperationConsumer.builder(cf, applier).options(ConsumerOptions.ofDefaults(queue)).start())
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("queue '" + queue + "' does not exist")
                .hasMessageContaining("QueueTopology.declare");
    }
}
