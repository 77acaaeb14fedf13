package dev.orderless.console.letters;

import java.util.Locale;
import java.util.Optional;

/** Where a stored letter stands. Only {@link #DEAD} letters count as dead letters waiting for someone. */
public enum LetterStatus {
    /** Waiting: listed, counted, taken by "replay all". */
    DEAD,
    /** Kept, out of the way: not counted as waiting, not taken by "replay all"; un-parked, it is dead again. */
    PARKED,
    /** Sent back to its work queue (kept for the retention, for the record). */
    REPLAYED,
    /** Dropped: its body is gone; the record stays for the retention. */
    PURGED;

    /** @return the name stored and shown: {@code dead}, {@code parked}, ... */
    public String stored() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param name a stored name, as {@link #stored()} gives
     * @return its status, or empty if it is none
     */
    public static Optional<LetterStatus> of(String name) {
        for (LetterStatus status : values()) {
            if (status.stored().equals(name)) {
                return Optional.of(status);
            }
        }
        return Optional.empty();
    }
}
