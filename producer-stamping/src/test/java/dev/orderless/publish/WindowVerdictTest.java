package dev.orderless.publish;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WindowVerdictTest {

    @Test
    void a_window_all_taken_is_done() {
        assertThat(WindowVerdict.after(0, 0, false, 1, 5)).isEqualTo(WindowVerdict.DONE);
    }

    @Test
    void refused_messages_alone_are_never_sent_again() {
        assertThat(WindowVerdict.after(0, 2, false, 1, 5)).isEqualTo(WindowVerdict.REFUSED_ONLY);
    }

    @Test
    void messages_not_taken_are_sent_again_until_the_last_attempt() {
        assertThat(WindowVerdict.after(3, 0, false, 4, 5)).isEqualTo(WindowVerdict.RESEND);
        assertThat(WindowVerdict.after(3, 0, false, 5, 5)).isEqualTo(WindowVerdict.GIVE_UP);
    }

    @Test
    void nothing_is_sent_again_into_a_broker_that_blocks_publishers() {
        assertThat(WindowVerdict.after(3, 0, true, 1, 5)).isEqualTo(WindowVerdict.BLOCKED);
    }

    @Test
    void a_block_does_not_matter_once_everything_was_taken() {
        assertThat(WindowVerdict.after(0, 0, true, 1, 5)).isEqualTo(WindowVerdict.DONE);
    }
}
