package dev.orderless.history;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * Whether a history may answer for an entity from its records at all, before anything about the entity itself is
 * checked: the safe path as the only one. A history answers only where it knows its live collection (it checks each
 * read against the live document) and its start was decided ({@link History#beginBaseline}), and then only for an
 * entity the baseline took in, or once the baseline is complete. Anything else says which call makes it answer:
 * a history turned on over existing data without them answered reads wrong and rebuilt entities wrong (issue 50).
 */
final class Vouching {
    /** How far the history's start has come, as its {@link BaselineStatus} says; it only moves forward. */
    enum Stage {
        /** No status: {@link History#beginBaseline} was never called, in any process, and no baseline pass ran. */
        UNDECIDED,
        /** A baseline began taking the live documents in and has not reached the end. */
        UNDER_WAY,
        /** Complete: every entity is taken in, or recorded from its first operation. */
        COMPLETE
    }

    private Vouching() {
    }

    /**
     * Why {@code entity} cannot be answered for, if it cannot.
     *
     * @param history   the history collection's name, for the reason
     * @param knowsLive the history was given its live collection ({@link History#withLive})
     * @param takenIn   the baseline took the entity in (its folded state is the baseline's)
     * @param stage     the history's stage, asked only where it decides (it may cost a read)
     */
    static Optional<String> unvouched(String history, String entity, boolean knowsLive, boolean takenIn,
                                      Supplier<Stage> stage) {
        if (!knowsLive) {
            return Optional.of("the history " + history + " does not know its live collection, so it cannot tell"
                    + " what '" + entity + "' held before the history was on or received without recording: build it"
                    + " with History.of(...).withLive(collection) and decide how it starts with"
                    + " History.beginBaseline(start) before the consumers that record start");
        }
        if (takenIn) {
            return Optional.empty();
        }
        return switch (stage.get()) {
            case COMPLETE -> Optional.empty();
            case UNDECIDED -> Optional.of("how the history " + history + " starts was never decided, so '" + entity
                    + "' may have had operations before it was on: call History.beginBaseline(Start.DETECT) before the"
                    + " consumers that record start (RUN where the collection had data before the history,"
                    + " DECLARE_COMPLETE where the history has been on since its first write; Spring Boot:"
                    + " orderless.history.baseline.enabled), then run HistoryBaseline beside them while it is under way");
            case UNDER_WAY -> Optional.of("the history's baseline has not taken '" + entity + "' in yet, and is not"
                    + " complete: it may have had operations before the history was on, whose effects its records"
                    + " cannot show (overwritten since, or not); its reads answer once the baseline has taken it in"
                    + " (HistoryBaseline.runIfDue, beside the consumers), or is complete");
        };
    }
}
