package dev.orderless.demo;

import dev.orderless.apply.EntityState;
import dev.orderless.oracle.ReferenceModel;
import java.io.PrintStream;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The one line {@code run} and {@code verify} end with, which scripts and tests read, and the exit code
 * it stands for: 0 only if converged, nothing lost, nothing still queued and the rosters consistent. Beside the whole students, it names
 * how many students' credits (a counter) and status (a ranked register) differ from the oracle's: both are part of
 * {@code diverged} too, but a sum counted twice, or a status that moved back, shows there by name.
 */
record Result(int entities, long diverged, long creditsDiverged, long statusDiverged, long published, long applied,
              long stale, long deadLettered, long lost, long queued, boolean rostersConsistent) {

    /** The result of comparing {@code stored} with the oracle's {@code expected} states. */
    static Result compared(Map<String, EntityState> expected, Map<String, EntityState> stored, long published,
                           long applied, long stale, long deadLettered, long lost, boolean rostersConsistent) {
        return new Result(expected.size(), ReferenceModel.diverged(expected, stored).size(),
                differing(expected, stored, state -> state.counters().get(Enrollment.CREDITS)),
                differing(expected, stored, state -> state.registers().get(Enrollment.STATUS)),
                published, applied, stale, deadLettered, lost, 0, rostersConsistent);
    }

    /**
     * The same result while {@code queued} messages are still in the work queue (or held by a consumer attached to
     * it): effects not applied yet are not lost yet, so {@code lost} is 0 and {@code queued} says how many wait.
     */
    Result stillQueued(long queued) {
        return queued == 0 ? this : new Result(entities, diverged, creditsDiverged, statusDiverged, published, applied,
                stale, deadLettered, 0, queued, rostersConsistent);
    }

    private static long differing(Map<String, EntityState> expected, Map<String, EntityState> stored,
                                  Function<EntityState, Object> part) {
        return expected.entrySet().stream().filter(e -> !Objects.equals(part.apply(e.getValue()),
                stored.containsKey(e.getKey()) ? part.apply(stored.get(e.getKey())) : null)).count();
    }

    boolean converged() {
        return diverged == 0;
    }

    /** Prints the {@code RESULT} line; returns the exit code. */
    int print(PrintStream out) {
        out.printf("RESULT converged=%s entities=%d diverged=%d published=%d applied=%d stale=%d dead_lettered=%d"
                        + " lost=%d queued=%d rosters_consistent=%s credits_diverged=%d status_diverged=%d%n", converged(),
                entities, diverged, published, applied, stale, deadLettered, lost, queued, rostersConsistent,
                creditsDiverged, statusDiverged);
        return converged() && lost == 0 && queued == 0 && rostersConsistent ? 0 : 1;
    }
}
