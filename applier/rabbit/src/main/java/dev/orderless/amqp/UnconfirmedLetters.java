package dev.orderless.amqp;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The letters published and not confirmed yet, by where they went: the channel's generation (a new
 * channel after a broken one is the next generation) and the publish seq on it (seqs restart per channel).
 *
 * <ol>
 *   <li>A letter is added just before its publish ({@link #sent}); a publish that fails takes it out again
 *       ({@link #forget}).
 *   <li>A confirm settles the letter with its seq, or, {@code multiple}, every letter of that channel up to
 *       it ({@link #confirmed}).
 *   <li>A channel that closes fails every letter still waiting on it ({@link #channelClosed}).
 *   <li>A letter whose confirm is overdue fails ({@link #overdue}): overdue counts from the later of its
 *       publish and the end of the broker's last block, so a letter sent just before an alarm waits for
 *       its confirm rather than being sent twice.
 * </ol>
 * Each letter leaves exactly once, by whichever comes first. Thread-safe: confirms arrive on the
 * connection's thread, expiry on another. Pure: times are given, in {@link System#nanoTime()} units.
 *
 * @param <L> a letter
 */
final class UnconfirmedLetters<L> {
    private final ConcurrentSkipListMap<Sent, Waiting<L>> waiting = new ConcurrentSkipListMap<>();

    /** Where a letter went: the channel's generation and its publish seq on that channel. */
    record Sent(long generation, long seq) implements Comparable<Sent> {
        @Override
        public int compareTo(Sent other) {
            int byGeneration = Long.compare(generation, other.generation);
            return byGeneration != 0 ? byGeneration : Long.compare(seq, other.seq);
        }
    }

    private record Waiting<L>(L letter, long sentAtNanos) {
    }

    /** {@code letter} is about to be published at {@code sent}. */
    void sent(Sent sent, L letter, long nowNanos) {
        waiting.put(sent, new Waiting<>(letter, nowNanos));
    }

    /** The publish at {@code sent} failed: its letter waits for no confirm. */
    void forget(Sent sent) {
        waiting.remove(sent);
    }

    /** The letters a confirm of {@code seq} on the channel of {@code generation} settles, taken out. */
    List<L> confirmed(long generation, long seq, boolean multiple) {
        List<L> letters = new ArrayList<>();
        if (multiple) {
            var upTo = waiting.subMap(new Sent(generation, 0), true, new Sent(generation, seq), true);
            upTo.values().forEach(w -> letters.add(w.letter()));
            upTo.clear();
        } else {
            Waiting<L> one = waiting.remove(new Sent(generation, seq));
            if (one != null) {
                letters.add(one.letter());
            }
        }
        return letters;
    }

    /** The letters still waiting on the channel of {@code generation}, which closed, taken out. */
    List<L> channelClosed(long generation) {
        var ofChannel = waiting.subMap(new Sent(generation, 0), true, new Sent(generation, Long.MAX_VALUE), true);
        List<L> lost = new ArrayList<>();
        ofChannel.values().forEach(w -> lost.add(w.letter()));
        ofChannel.clear();
        return lost;
    }

    /**
     * The letters whose confirm is overdue at {@code nowNanos}, taken out: waiting longer than
     * {@code timeoutNanos} since the later of their publish and {@code unblockedAtNanos}.
     */
    List<L> overdue(long nowNanos, long unblockedAtNanos, long timeoutNanos) {
        List<L> overdue = new ArrayList<>();
        for (Map.Entry<Sent, Waiting<L>> e : waiting.entrySet()) {
            Waiting<L> w = e.getValue();
            if (nowNanos - Math.max(w.sentAtNanos(), unblockedAtNanos) > timeoutNanos && waiting.remove(e.getKey(), w)) {
                overdue.add(w.letter());
            }
        }
        return overdue;
    }

    /** How many letters wait for a confirm. */
    int size() {
        return waiting.size();
    }
}
