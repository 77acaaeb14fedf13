package dev.orderless.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.Backoff;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RelayStatusTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private final RelayStatus status = new RelayStatus(Backoff.fixed(Duration.ofMillis(100)).withMax(Duration.ofSeconds(1)));

    @Test
    void a_new_relay_runs_with_no_problem() {
        assertThat(status.state()).isEqualTo(OutboxRelay.State.RUNNING);
        assertThat(status.problem()).isEmpty();
    }

    @Test
    void only_the_first_failure_of_a_run_starts_one() {
        assertThat(status.trouble("broker down", T0)).isTrue();
        assertThat(status.trouble("broker down", T0.plusSeconds(1))).isFalse();

        assertThat(status.state()).isEqualTo(OutboxRelay.State.BACKING_OFF);
        assertThat(status.problem()).contains("broker down");
    }

    @Test
    void pauses_double_while_failures_last_up_to_the_max() {
        status.trouble("x", T0);
        assertThat(status.pause()).isEqualTo(Duration.ofMillis(100));
        status.trouble("x", T0);
        assertThat(status.pause()).isEqualTo(Duration.ofMillis(200));
        for (int i = 0; i < 10; i++) {
            status.trouble("x", T0);
        }
        assertThat(status.pause()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void a_success_ends_the_run_says_how_long_it_lasted_and_the_next_failure_pauses_like_the_first() {
        status.trouble("x", T0);
        status.trouble("x", T0.plusSeconds(3));

        assertThat(status.recovered(T0.plusSeconds(7))).contains(Duration.ofSeconds(7));
        assertThat(status.state()).isEqualTo(OutboxRelay.State.RUNNING);
        assertThat(status.problem()).isEmpty();
        status.trouble("y", T0.plusSeconds(8));
        assertThat(status.pause()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void a_success_after_a_success_ends_no_run() {
        assertThat(status.recovered(T0)).isEmpty();
    }

    @Test
    void a_failed_relay_stays_failed_when_stopped() {
        status.failed("stopped on an unexpected java.lang.NoSuchMethodError");
        status.stopped();

        assertThat(status.state()).isEqualTo(OutboxRelay.State.FAILED);
        assertThat(status.problem()).hasValueSatisfying(p -> assertThat(p).contains("NoSuchMethodError"));
    }

    @Test
    void a_running_relay_stops() {
        status.stopped();

        assertThat(status.state()).isEqualTo(OutboxRelay.State.STOPPED);
    }

    @Test
    void the_pause_announced_before_a_failure_is_the_one_it_takes() {
        RelayStatus jittered = new RelayStatus(dev.orderless.Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(10)));
        jittered.trouble("x", T0);
        Duration announced = jittered.nextPause();

        jittered.trouble("x", T0);

        assertThat(jittered.pause()).isEqualTo(announced);
    }
}
