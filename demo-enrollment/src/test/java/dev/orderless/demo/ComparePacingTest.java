package dev.orderless.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ComparePacingTest {
    private static final long MS = 1_000_000;

    @Test
    void compares_once_the_view_has_stopped_moving() {
        ComparePacing pacing = new ComparePacing(Duration.ofSeconds(5), 0);

        assertThat(pacing.compareNow(10, 100 * MS)).as("first look: no previous count").isFalse();
        assertThat(pacing.compareNow(10, 200 * MS)).as("nothing applied since").isTrue();
        assertThat(pacing.compareNow(10, 300 * MS)).as("still settled").isTrue();
    }

    @Test
    void skips_while_the_view_is_applying_events() {
        ComparePacing pacing = new ComparePacing(Duration.ofSeconds(5), 0);

        for (int look = 1; look < 49; look++) {
            assertThat(pacing.compareNow(look * 100, look * 100 * MS)).as("look %d", look).isFalse();
        }
    }

    @Test
    void compares_anyway_every_period_while_the_view_keeps_moving() {
        ComparePacing pacing = new ComparePacing(Duration.ofSeconds(5), 0);

        assertThat(pacing.compareNow(1, 4_900 * MS)).isFalse();
        assertThat(pacing.compareNow(2, 5_000 * MS)).as("5 s since the start").isTrue();
        assertThat(pacing.compareNow(3, 5_100 * MS)).as("the period restarts at a comparison").isFalse();
        assertThat(pacing.compareNow(4, 10_000 * MS)).isTrue();
    }
}
