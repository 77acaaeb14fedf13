package dev.orderless.consume.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.TransientException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** How the consumer tells "MongoDB down for everyone" from "this one message keeps failing". */
class HoldClockTest {
    private static final Duration AT_ONCE = Duration.ofNanos(1);
    private static final TransientException DROPPED = new TransientException("connection dropped mid-operation");
    private static final TransientException DOWN = new TransientException("no server selectable", null, true);

    private final AtomicInteger probes = new AtomicInteger();

    private HoldClock clock(boolean mongoAnswers, Duration maxHold) {
        return new HoldClock(() -> {
            probes.incrementAndGet();
            return mongoAnswers;
        }, maxHold);
    }

    @Test
    void one_failure_alone_never_dead_letters_even_with_others_answered() {
        HoldClock clock = clock(true, AT_ONCE);
        HoldClock.Hold hold = clock.hold();
        clock.completed();

        assertThat(hold.heldTooLong(DROPPED)).isFalse();
    }

    @Test
    void one_serving_interval_alone_never_dead_letters_as_mongodb_may_have_just_come_back() {
        HoldClock clock = clock(true, AT_ONCE);
        HoldClock.Hold hold = clock.hold();
        hold.heldTooLong(DROPPED);
        clock.completed();

        assertThat(hold.heldTooLong(DROPPED)).isFalse();
    }

    @Test
    void a_message_failing_while_others_are_answered_is_held_too_long_once_max_hold_has_passed() {
        HoldClock clock = clock(false, AT_ONCE);
        HoldClock.Hold hold = clock.hold();
        hold.heldTooLong(DROPPED);
        clock.completed();
        hold.heldTooLong(DROPPED);
        clock.completed();

        assertThat(hold.heldTooLong(DROPPED)).isTrue();
        assertThat(probes).as("another delivery's answer is enough").hasValue(0);
    }

    @Test
    void a_message_failing_while_others_are_answered_holds_until_max_hold() {
        HoldClock clock = clock(true, Duration.ofHours(1));
        HoldClock.Hold hold = clock.hold();
        hold.heldTooLong(DROPPED);
        clock.completed();

        assertThat(hold.heldTooLong(DROPPED)).isFalse();
    }

    @Test
    void with_nobody_else_trying_the_write_probe_decides() {
        HoldClock answering = clock(true, AT_ONCE);
        HoldClock.Hold held = answering.hold();
        held.heldTooLong(DROPPED);
        held.heldTooLong(DROPPED);
        assertThat(held.heldTooLong(DROPPED)).isTrue();

        HoldClock silent = clock(false, AT_ONCE);
        HoldClock.Hold waiting = silent.hold();
        waiting.heldTooLong(DROPPED);
        assertThat(waiting.heldTooLong(DROPPED)).isFalse();
        assertThat(waiting.heldTooLong(DROPPED)).isFalse();
    }

    @Test
    void an_error_that_shows_mongodb_down_never_dead_letters_and_resets_the_clock() {
        HoldClock clock = clock(true, AT_ONCE);
        HoldClock.Hold hold = clock.hold();
        hold.heldTooLong(DROPPED);
        clock.completed();
        hold.heldTooLong(DROPPED);
        for (int i = 0; i < 5; i++) {
            clock.completed();
            assertThat(hold.heldTooLong(DOWN)).isFalse();
        }
        clock.completed();
        assertThat(hold.heldTooLong(DROPPED)).as("the clock starts again").isFalse();
    }

    @Test
    void another_delivery_seeing_mongodb_down_counts_as_down() {
        HoldClock clock = clock(true, AT_ONCE);
        HoldClock.Hold mine = clock.hold();
        mine.heldTooLong(DROPPED);
        clock.hold().heldTooLong(DOWN);

        assertThat(mine.heldTooLong(DROPPED)).isFalse();
        assertThat(probes).hasValue(0);
    }

    @Test
    void two_messages_failing_on_their_own_do_not_hold_each_other_up_when_writes_are_accepted() {
        HoldClock clock = clock(true, AT_ONCE);
        HoldClock.Hold mine = clock.hold();
        HoldClock.Hold theirs = clock.hold();
        for (int i = 0; i < 2; i++) {
            mine.heldTooLong(DROPPED);
            theirs.heldTooLong(DROPPED);
        }

        assertThat(mine.heldTooLong(DROPPED)).isTrue();
        assertThat(theirs.heldTooLong(DROPPED)).isTrue();
    }

    @Test
    void others_failing_too_with_writes_refused_counts_as_down() {
        HoldClock clock = clock(false, AT_ONCE);
        HoldClock.Hold mine = clock.hold();
        HoldClock.Hold theirs = clock.hold();
        for (int i = 0; i < 3; i++) {
            mine.heldTooLong(DROPPED);
            theirs.heldTooLong(DROPPED);
        }

        assertThat(mine.heldTooLong(DROPPED)).isFalse();
        assertThat(probes).as("the write probe decides").hasPositiveValue();
    }
}
