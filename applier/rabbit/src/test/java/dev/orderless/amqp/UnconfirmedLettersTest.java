package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.amqp.UnconfirmedLetters.Sent;
import org.junit.jupiter.api.Test;

/** Which letters a confirm, a closed channel or a timeout settles: no broker needed. */
class UnconfirmedLettersTest {
    private static final long TIMEOUT = 10_000;

    private static UnconfirmedLetters<String> threeOnChannelOneOneOnChannelTwo() {
        UnconfirmedLetters<String> letters = new UnconfirmedLetters<>();
        letters.sent(new Sent(1, 1), "a", 0);
        letters.sent(new Sent(1, 2), "b", 0);
        letters.sent(new Sent(1, 3), "c", 0);
        letters.sent(new Sent(2, 1), "d", 0);
        return letters;
    }

    @Test
    void a_single_confirm_settles_its_letter_only() {
        UnconfirmedLetters<String> letters = threeOnChannelOneOneOnChannelTwo();

        assertThat(letters.confirmed(1, 2, false)).containsExactly("b");
        assertThat(letters.confirmed(1, 2, false)).as("settled once").isEmpty();
        assertThat(letters.size()).isEqualTo(3);
    }

    @Test
    void a_multiple_confirm_settles_every_letter_of_its_channel_up_to_its_seq() {
        UnconfirmedLetters<String> letters = threeOnChannelOneOneOnChannelTwo();

        assertThat(letters.confirmed(1, 2, true)).containsExactly("a", "b");
        assertThat(letters.size()).isEqualTo(2);
    }

    @Test
    void a_confirm_never_settles_a_letter_of_another_channel_with_the_same_seq() {
        UnconfirmedLetters<String> letters = threeOnChannelOneOneOnChannelTwo();

        assertThat(letters.confirmed(2, 1, true)).containsExactly("d");
    }

    @Test
    void a_closed_channel_fails_every_letter_still_waiting_on_it() {
        UnconfirmedLetters<String> letters = threeOnChannelOneOneOnChannelTwo();
        letters.confirmed(1, 1, false);

        assertThat(letters.channelClosed(1)).containsExactly("b", "c");
        assertThat(letters.size()).isEqualTo(1);
    }

    @Test
    void a_failed_publish_waits_for_no_confirm() {
        UnconfirmedLetters<String> letters = threeOnChannelOneOneOnChannelTwo();
        letters.forget(new Sent(1, 3));

        assertThat(letters.confirmed(1, 3, true)).containsExactly("a", "b");
    }

    @Test
    void a_letter_is_overdue_only_after_the_timeout_since_it_was_sent() {
        UnconfirmedLetters<String> letters = new UnconfirmedLetters<>();
        letters.sent(new Sent(1, 1), "a", 1_000);

        assertThat(letters.overdue(1_000 + TIMEOUT, 0, TIMEOUT)).isEmpty();
        assertThat(letters.overdue(1_001 + TIMEOUT, 0, TIMEOUT)).containsExactly("a");
        assertThat(letters.overdue(1_000_000, 0, TIMEOUT)).as("failed once").isEmpty();
    }

    @Test
    void the_confirm_timeout_counts_only_from_the_end_of_the_last_block() {
        UnconfirmedLetters<String> letters = new UnconfirmedLetters<>();
        letters.sent(new Sent(1, 1), "sent just before the alarm", 1_000);
        long unblockedAt = 500_000;

        assertThat(letters.overdue(unblockedAt + TIMEOUT, unblockedAt, TIMEOUT)).isEmpty();
        assertThat(letters.overdue(unblockedAt + TIMEOUT + 1, unblockedAt, TIMEOUT))
                .containsExactly("sent just before the alarm");
    }
}
