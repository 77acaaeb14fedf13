package dev.orderless.outbox;

import java.time.Instant;
import java.util.Optional;

/**
 * When an entry whose own message could not be sent is parked. A refusal is evidence against the entry
 * only if the broker path worked meanwhile: a fault that stops every message (a broken tracing handler, a
 * client library clash) must park nothing.
 *
 * <ol>
 *   <li>A refusal counts if other entries were confirmed in the same batch, or if this relay had an entry
 *       confirmed since the entry's previous refusal ({@link #counts}).
 *   <li>The entry is parked once its counted refusals reach {@code parkAfter} ({@link #parks}).
 *   <li>A refusal is worth a WARN line when it is the entry's first, or when it counts; the rest (the same
 *       fault again, nothing going through) would repeat the relay's own BACKING_OFF line
 *       ({@link #worthAWarning}).
 * </ol>
 *
 * @param parkAfter counted refusals after which the entry is parked; at least 1
 */
record RefusalRule(int parkAfter) {
    RefusalRule {
        if (parkAfter < 1) {
            throw new IllegalArgumentException("parkAfter must be at least 1, was " + parkAfter);
        }
    }

    /**
     * Whether this refusal counts against the entry.
     *
     * @param othersWentThrough whether other entries of the same batch were confirmed
     * @param refusedBefore     when the entry was last refused, if it was
     * @param lastConfirmed     when this relay last had an entry confirmed ({@link Instant#MIN} if never)
     */
    static boolean counts(boolean othersWentThrough, Optional<Instant> refusedBefore, Instant lastConfirmed) {
        return othersWentThrough || refusedBefore.map(lastConfirmed::isAfter).orElse(false);
    }

    /** Whether an entry with {@code refusals} counted refusals is parked. */
    boolean parks(int refusals) {
        return refusals >= parkAfter;
    }

    /** Whether a refusal that does not park its entry is logged at WARN. */
    static boolean worthAWarning(Optional<Instant> refusedBefore, boolean counts) {
        return refusedBefore.isEmpty() || counts;
    }
}
