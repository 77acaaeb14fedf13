package dev.orderless.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.InvalidConfigurationException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ShareConsumerOptionsTest {
    @Test
    void the_defaults_name_the_dead_letter_topic_after_the_topic_and_poll_fifty_records() {
        ShareConsumerOptions options = ShareConsumerOptions.ofDefaults("ops", "group");
        assertThat(options.deadLetterTopic()).isEqualTo("ops.dlt");
        assertThat(options.maxPollRecords()).isEqualTo(50);
        assertThat(options.concurrency()).isEqualTo(1);
    }

    @Test
    void a_dead_letter_topic_equal_to_the_topic_is_refused_naming_it() {
        assertThatThrownBy(() -> ShareConsumerOptions.ofDefaults("ops", "group").withDeadLetterTopic("ops"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("deadLetterTopic");
    }

    @Test
    void each_value_out_of_range_is_refused_naming_its_parameter() {
        ShareConsumerOptions options = ShareConsumerOptions.ofDefaults("ops", "group");
        assertThatThrownBy(() -> options.withConcurrency(0)).hasMessageContaining("concurrency");
        assertThatThrownBy(() -> options.withMaxPollRecords(1001)).hasMessageContaining("maxPollRecords");
        assertThatThrownBy(() -> options.withPollTimeout(Duration.ZERO)).hasMessageContaining("pollTimeout");
        assertThatThrownBy(() -> options.withMaxHold(Duration.ofSeconds(-1))).hasMessageContaining("maxHold");
        assertThatThrownBy(() -> ShareConsumerOptions.ofDefaults("ops", " ")).hasMessageContaining("group");
        assertThatThrownBy(() -> ShareConsumerOptions.ofDefaults(null, "group")).hasMessageContaining("topic");
    }
}
