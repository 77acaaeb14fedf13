package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.amqp.HeldLetters.Decision;
import dev.orderless.amqp.HeldLetters.Release;
import org.junit.jupiter.api.Test;

/** What becomes of a dead letter while the broker blocks publishers: no broker needed. */
class HeldLettersTest {

    @Test
    void a_letter_is_sent_while_the_broker_does_not_block() {
        assertThat(HeldLetters.decide(false, false)).isEqualTo(Decision.SEND);
    }

    @Test
    void a_letter_is_held_while_the_broker_blocks_publishers() {
        assertThat(HeldLetters.decide(false, true)).isEqualTo(Decision.HOLD);
    }

    @Test
    void a_letter_handed_to_a_closing_publisher_is_refused_blocked_or_not() {
        assertThat(HeldLetters.decide(true, false)).isEqualTo(Decision.REFUSE);
        assertThat(HeldLetters.decide(true, true)).isEqualTo(Decision.REFUSE);
    }

    @Test
    void held_letters_are_released_in_the_order_handed_in_once_the_block_ends() {
        HeldLetters<String> held = new HeldLetters<>();
        held.hold("a");
        held.hold("b");

        assertThat(held.count()).isEqualTo(2);
        assertThat(held.release(false, false, l -> true)).contains(new Release<>("a", true));
        assertThat(held.release(false, false, l -> true)).contains(new Release<>("b", true));
        assertThat(held.release(false, false, l -> true)).isEmpty();
        assertThat(held.count()).isZero();
    }

    @Test
    void nothing_is_released_while_the_broker_blocks_or_the_publisher_is_closed() {
        HeldLetters<String> held = new HeldLetters<>();
        held.hold("a");

        assertThat(held.release(false, true, l -> true)).isEmpty();
        assertThat(held.release(true, false, l -> true)).isEmpty();
        assertThat(held.count()).isEqualTo(1);
    }

    @Test
    void a_letter_whose_original_went_back_to_the_queue_is_released_to_be_dropped_not_sent() {
        HeldLetters<String> held = new HeldLetters<>();
        held.hold("consumer gone");

        assertThat(held.release(false, false, l -> false)).contains(new Release<>("consumer gone", false));
    }

    @Test
    void closing_drops_every_held_letter() {
        HeldLetters<String> held = new HeldLetters<>();
        held.hold("a");
        held.hold("b");

        assertThat(held.dropAll()).containsExactly("a", "b");
        assertThat(held.count()).isZero();
    }
}
