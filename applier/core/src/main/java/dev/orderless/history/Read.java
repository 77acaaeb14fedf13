package dev.orderless.history;

import java.util.Optional;

/**
 * The answer to a question about the past: known, or why the history cannot tell (never a wrong state).
 *
 * @param <T> what is asked for
 */
public sealed interface Read<T> {

    /** The answer, if the history knows it. */
    Optional<T> value();

    /** The history holds everything the answer needs. */
    record Known<T>(T answer) implements Read<T> {
        @Override
        public Optional<T> value() {
            return Optional.of(answer);
        }
    }

    /**
     * The history no longer holds what the answer needs: it asks below a retention horizon, or operations
     * arrived below it after it was folded.
     */
    record Unknowable<T>(String reason) implements Read<T> {
        @Override
        public Optional<T> value() {
            return Optional.empty();
        }
    }
}
