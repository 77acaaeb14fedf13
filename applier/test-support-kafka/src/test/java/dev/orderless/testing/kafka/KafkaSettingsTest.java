package dev.orderless.testing.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class KafkaSettingsTest {
    private final KafkaSettings defaults = KafkaSettings.ofDefaults();

    @Test
    void a_record_lock_under_one_second_is_refused_naming_the_parameter() {
        assertThatThrownBy(() -> defaults.withRecordLockDuration(Duration.ofMillis(999)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("recordLockDuration");
    }

    @Test
    void a_delivery_count_limit_outside_two_to_ten_is_refused_naming_the_parameter() {
        assertThatThrownBy(() -> defaults.withDeliveryCountLimit(1)).hasMessageStartingWith("deliveryCountLimit");
        assertThatThrownBy(() -> defaults.withDeliveryCountLimit(11)).hasMessageStartingWith("deliveryCountLimit");
    }

    @Test
    void a_share_session_timeout_under_one_second_is_refused_naming_the_parameter() {
        assertThatThrownBy(() -> defaults.withShareSessionTimeout(Duration.ofMillis(500)))
                .hasMessageStartingWith("shareSessionTimeout");
    }

    @Test
    void a_heartbeat_not_shorter_than_the_session_timeout_is_refused_naming_both() {
        assertThatThrownBy(() -> defaults.withShareHeartbeatInterval(defaults.shareSessionTimeout()))
                .hasMessageStartingWith("shareHeartbeatInterval").hasMessageContaining("shareSessionTimeout");
    }

    @Test
    void no_partitions_is_refused_naming_the_parameter() {
        assertThatThrownBy(() -> defaults.withDefaultPartitions(0)).hasMessageStartingWith("defaultPartitions");
    }

    @Test
    void a_missing_duration_is_refused_naming_the_parameter() {
        assertThatThrownBy(() -> defaults.withRecordLockDuration(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("recordLockDuration");
    }

    @Test
    void the_copies_change_only_their_parameter() {
        KafkaSettings changed = defaults.withDeliveryCountLimit(3).withDefaultPartitions(4);
        assertThat(changed).isEqualTo(new KafkaSettings(defaults.recordLockDuration(), 3,
                defaults.shareSessionTimeout(), defaults.shareHeartbeatInterval(), 4));
    }
}
