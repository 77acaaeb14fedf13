package dev.orderless.history;

import java.util.Optional;

/**
 * The answer to a question about the past: known, or why the history cannot tell (never a wrong state).
 *
 * @param <T> what is asked for
 */
public sealed interface Read<T> {

    /**
     * The answer, if the history knows it.
     *
     * @return the answer of a {@link Known}; empty for an {@link Unknowable}
     */
    Optional<T> value();

    /**
     * The history holds everything the answer needs.
     *
     * @param answer the answer
     * @param <T>    what is asked for
     */
    record Known<T>(T answer) implements Read<T> {
        @Override
        public Optional<T> value() {
            return Optional.of(answer);
        }
    }

    /**
     * The history does not hold what the answer needs: it asks below a retention horizon, or operations arrived
     * below it after it was folded; it asks below a baseline horizon (the entity had operations before the history
     * was on), or for a state without tombstones compaction dropped where the history cannot account for them; the
     * baseline has not taken the entity in yet and is not complete, or could not read its live document; or the
     * entity's live document holds state that no record accounts for.
     *
     * @param reason why, in words for a person
     * @param <T>    what is asked for
     */
    record Unknowable<T>(String reason) implements Read<T> {
        @Override
        public Optional<T> value() {
            return Optional.empty();
        }
    }
}
