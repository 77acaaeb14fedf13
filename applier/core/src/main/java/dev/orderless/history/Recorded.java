package dev.orderless.history;

import java.util.Locale;

/** What became of one operation given to {@link History#record}. */
public enum Recorded {
    /** Recorded now. */
    RECORDED,
    /** Already recorded, the same operation: a redelivery. */
    DUPLICATE,
    /**
     * A different operation with the same {@code (entity, seq)} was recorded first and stays: a stamper gave
     * two operations one seq (counted, and logged as a warning).
     */
    COLLISION;

    /**
     * The metric tag.
     *
     * @return the {@code outcome} tag of {@code orderless.history.recorded}: the constant's name in lower case
     */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
