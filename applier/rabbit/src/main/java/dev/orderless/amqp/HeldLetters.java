package dev.orderless.amqp;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The dead letters held while the broker blocks publishers, and what becomes of each letter handed in.
 * Held means kept in memory, its original unacked, until a condition clears by itself: not parked (see
 * {@link dev.orderless.amqp}).
 *
 * <ol>
 *   <li>A letter handed in to a publisher that is closing is refused ({@link Decision#REFUSE}); while
 *       the broker blocks publishers it is held ({@link Decision#HOLD}), in the order handed in; otherwise
 *       it is sent ({@link Decision#SEND}).
 *   <li>When the block ends, the held letters are released in order while the publisher is open and the
 *       broker does not block again ({@link #release}): each is sent if its original is still held by its
 *       consumer, else dropped (the broker redelivers the original, which is dead-lettered then).
 *   <li>On close, every held letter is dropped ({@link #dropAll}).
 * </ol>
 * Holding is bounded by the consumers' prefetch: each held letter's original is unacked. Not thread-safe:
 * the publisher's monitor guards it.
 *
 * @param <L> a letter
 */
final class HeldLetters<L> {
    /** What becomes of a letter handed in. */
    enum Decision { REFUSE, HOLD, SEND }

    private final ArrayDeque<L> held = new ArrayDeque<>();

    static Decision decide(boolean closed, boolean blocked) {
        return closed ? Decision.REFUSE : blocked ? Decision.HOLD : Decision.SEND;
    }

    void hold(L letter) {
        held.add(letter);
    }

    /** How many letters are held now. */
    int count() {
        return held.size();
    }

    /**
     * The next held letter, taken out, if one may go now ({@code closed} and {@code blocked} as they are
     * now), and whether to send it: true if {@code stillHeld} says its original is still unacked with its
     * consumer, false to drop it.
     */
    Optional<Release<L>> release(boolean closed, boolean blocked, Predicate<L> stillHeld) {
        if (held.isEmpty() || closed || blocked) {
            return Optional.empty();
        }
        L letter = held.poll();
        return Optional.of(new Release<>(letter, stillHeld.test(letter)));
    }

    /** A held letter released: to be sent, or dropped. */
    record Release<L>(L letter, boolean send) {
    }

    /** Every held letter, taken out: the publisher stops. */
    List<L> dropAll() {
        List<L> dropped = new ArrayList<>(held);
        held.clear();
        return dropped;
    }
}
