package dev.orderless.lease;

import java.util.Map;
import java.util.Optional;

/**
 * Hands out leases on named resources, at most one live holder each. Losing the race is not an error:
 * the answer is empty.
 */
@FunctionalInterface
public interface LeaseProvider {
    /**
     * Takes the lease on {@code resource} for {@code owner} if it is free or expired.
     *
     * @param resource the name of what is leased; not empty
     * @param owner unique per process incarnation (a restarted process must use a new one)
     * @return the lease, with a fence higher than any earlier holder's; empty if someone else holds it
     */
    Optional<Lease> tryAcquire(String resource, String owner);

    /**
     * The live leases whose resource starts with {@code prefix}, resource to owner, as this provider sees
     * them now; empty if it cannot list them (then whoever asks must do without, e.g. no rebalancing).
     * This default cannot list them.
     *
     * @param prefix the start of the resources' names, taken literally
     * @return the live holders by resource, or empty if this provider cannot list them
     */
    default Optional<Map<String, String>> holders(String prefix) {
        return Optional.empty();
    }
}
