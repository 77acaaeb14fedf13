package dev.orderless;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private static final Backoff EXACT = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2), 0);

    @Test
    void the_pause_doubles_from_initial_after_each_failure() {
        assertThat(EXACT.pause(1, 0.7)).isEqualTo(Duration.ofMillis(100));
        assertThat(EXACT.pause(2, 0.7)).isEqualTo(Duration.ofMillis(200));
        assertThat(EXACT.pause(4, 0.7)).isEqualTo(Duration.ofMillis(800));
    }

    @Test
    void the_pause_never_exceeds_max_however_many_failures() {
        assertThat(EXACT.pause(6, 0)).isEqualTo(Duration.ofSeconds(2));
        assertThat(EXACT.pause(Integer.MAX_VALUE, 0)).isEqualTo(Duration.ofSeconds(2));
        assertThat(Backoff.of(Duration.ofHours(20), Backoff.LONGEST).pause(1_000, 0)).isEqualTo(Backoff.LONGEST);
    }

    @Test
    void a_missing_initial_pause_is_refused_naming_it() {
        assertThatThrownBy(() -> EXACT.withInitial(null))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("initial");
    }

    @Test
    void jitter_takes_at_most_its_share_off_the_pause() {
        Backoff half = EXACT.withJitter(0.5);
        assertThat(half.pause(2, 0)).isEqualTo(Duration.ofMillis(200));
        assertThat(half.pause(2, 0.5)).isEqualTo(Duration.ofMillis(150));
        assertThat(half.pause(2, 0.999_999)).isGreaterThan(Duration.ofMillis(100));
        for (int i = 0; i < 1_000; i++) {
            assertThat(half.pause(3)).isBetween(Duration.ofMillis(200), Duration.ofMillis(400));
        }
    }

    @Test
    void a_fixed_backoff_pauses_the_same_every_time() {
        Backoff fixed = Backoff.fixed(Duration.ofMillis(200));
        assertThat(fixed.pause(1)).isEqualTo(fixed.pause(9)).isEqualTo(Duration.ofMillis(200));
    }

    @Test
    void a_backoff_that_cannot_work_is_refused_naming_the_setting() {
        assertThatThrownBy(() -> Backoff.of(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("initial must be positive");
        assertThatThrownBy(() -> Backoff.of(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("max (PT1S) must be at least initial (PT2S)");
        assertThatThrownBy(() -> EXACT.withJitter(1.5))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("jitter must be from 0 to 1");
    }

    @Test
    void a_pause_longer_than_a_day_is_refused_so_every_accepted_backoff_can_compute_its_pauses() {
        assertThatThrownBy(() -> Backoff.of(Duration.ofSeconds(1), Duration.ofDays(110_000)))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("backoff.max must be at most PT24H");
        assertThatThrownBy(() -> Backoff.fixed(Duration.ofDays(2)))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("backoff.initial must be at most PT24H");
        Backoff longest = Backoff.of(Duration.ofMillis(1), Backoff.LONGEST);

        assertThat(longest.pause(Integer.MAX_VALUE, 0)).isEqualTo(Backoff.LONGEST);
    }

    @Test
    void a_random_share_outside_zero_to_one_is_refused_instead_of_making_a_negative_pause() {
        assertThatThrownBy(() -> EXACT.pause(1, 2.0)).isInstanceOf(IllegalArgumentException.class);
    }
}
