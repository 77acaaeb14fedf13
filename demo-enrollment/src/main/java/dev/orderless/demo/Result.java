package dev.orderless.demo;

import java.io.PrintStream;

/**
 * The one line {@code run} and {@code verify} end with, which scripts and tests read, and the exit code
 * it stands for: 0 only if converged, nothing lost and the rosters consistent.
 */
record Result(int entities, long diverged, long published, long applied, long stale, long deadLettered, long lost,
              boolean rostersConsistent) {

    boolean converged() {
        return diverged == 0;
    }

    /** Prints the {@code RESULT} line; returns the exit code. */
    int print(PrintStream out) {
        out.printf("RESULT converged=%s entities=%d diverged=%d published=%d applied=%d stale=%d dead_lettered=%d"
                        + " lost=%d rosters_consistent=%s%n", converged(), entities, diverged, published, applied, stale,
                deadLettered, lost, rostersConsistent);
        return converged() && lost == 0 && rostersConsistent ? 0 : 1;
    }
}
