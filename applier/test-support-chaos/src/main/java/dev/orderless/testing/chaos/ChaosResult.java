package dev.orderless.testing.chaos;

import java.io.PrintStream;
import java.util.List;
import java.util.Optional;

/**
 * What a chaos run found.
 *
 * @param name           the run's name, as its row shows it
 * @param operations     distinct operations
 * @param messages       messages published (duplicates included)
 * @param faults         the faults injected, as the row names them
 * @param diverged       entities whose document differs from the reference model's state (a counter that differs
 *                       counts here, not as lost: a sum does not say whether an increment is missing or one too many)
 * @param lost           effects the reference model's states show and the documents lack (an element, a tombstone, a
 *                       register's value, a delete), plus messages left in the queue
 * @param deadLettered   messages in the dead-letter queue (a good history has none)
 * @param seconds        how long the run took
 * @param seed           the seed that reruns it
 * @param counterexample the smallest breaking history, where documents diverged and it could be reproduced one
 *                       message at a time
 * @param notReproduced  diverged entities shrinking tried whose messages did not break when delivered one at a time
 *                       (empty when nothing was shrunk)
 * @param divergedIds    the first diverged entities (up to 10)
 * @param viewDiverged   with a view ({@link ChaosRun#withView}): its documents that differ from the projection of
 *                       the final documents (a view document missing, or one too many, counts)
 */
public record ChaosResult(String name, int operations, int messages, List<String> faults, long diverged, long lost,
                          long deadLettered, double seconds, long seed, Optional<Counterexample> counterexample,
                          List<String> notReproduced, List<String> divergedIds, Optional<Long> viewDiverged) {
    /** Keeps unmodifiable copies of the lists. */
    public ChaosResult {
        faults = List.copyOf(faults);
        notReproduced = List.copyOf(notReproduced);
        divergedIds = List.copyOf(divergedIds);
    }

    /**
     * True if every document equals the reference model's state, nothing was lost, nothing dead-lettered, and the
     * view (if any) holds what the projection of the final documents gives.
     */
    public boolean converged() {
        return diverged == 0 && lost == 0 && deadLettered == 0 && viewDiverged.orElse(0L) == 0;
    }

    /**
     * The {@code [chaos]} table of this run (header, row, seed), the diverged entities, and the counterexample, or
     * that shrinking could not reproduce the divergence.
     *
     * @param out where to print
     */
    public void print(PrintStream out) {
        out.printf("[chaos] %-26s %6s %8s  %-54s %8s %5s %13s %7s%n", "scenario", "ops", "messages",
                "faults injected", "diverged", "lost", "dead-lettered", "time");
        out.printf("[chaos] %-26s %6d %8d  %-54s %8d %5d %13d %6.1fs%n", name, operations, messages,
                faults.isEmpty() ? "none" : String.join(", ", faults), diverged, lost, deadLettered, seconds);
        out.printf("[chaos] seed %d: the same seed runs the same history in the same order (ChaosRun.withSeed,"
                + " chaos --seed)%n", seed);
        viewDiverged.ifPresent(n -> out.printf("[chaos] view: %d document(s) differ from the projection of the final"
                + " documents%n", n));
        if (diverged > 0) {
            out.println("[chaos] diverged: " + divergedIds + (diverged > divergedIds.size() ? " ..." : ""));
        }
        if (!notReproduced.isEmpty()) {
            out.println("[chaos] not reproduced one message at a time: the messages of " + String.join(", ",
                    notReproduced) + " did not break when delivered in order through one consumer (as published, and"
                    + " in ten shuffles, or not again once shrunk): " + (counterexample.isPresent()
                    ? "the next diverged entity did" : "no counterexample. The divergence needs messages applied at the"
                    + " same moment, or the consumer broke only once; force that interleaving in a test of its own"));
        }
        counterexample.ifPresent(c -> c.print(out));
    }
}
