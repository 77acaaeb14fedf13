package dev.orderless.outbox;

import com.mongodb.client.model.Filters;
import dev.orderless.InvalidInputException;
import dev.orderless.internal.MongoErrors;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import org.bson.conversions.Bson;

/**
 * The outbox's parked entries, for whoever operates it: entries no relay publishes any more because
 * their own message kept failing while others went through, or because they are not operations at all.
 * See them, send them again once the cause is fixed, or drop them. Parked entries are not waiting: they
 * count neither in the backlog nor in the oldest entry's age.
 *
 * <pre>
 * ParkedEntries parked = outbox.parked();
 * parked.list(20).forEach(System.out::println);
 * parked.retry(List.of("6561a3...")) ;   // or parked.retryAll()
 * </pre>
 */
public final class ParkedEntries {
    private final OutboxStore store;
    private final Clock clock;

    ParkedEntries(OutboxStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    /** How many entries are parked. */
    public long count() {
        return mongo("counting parked entries", store::parked);
    }

    /** The first {@code max} parked entries, oldest first. */
    public List<ParkedEntry> list(int max) {
        if (max < 1) {
            throw new InvalidInputException("parked entries: max must be at least 1, was " + max);
        }
        return mongo("listing parked entries", () -> store.parkedEntries(max));
    }

    /**
     * Makes these parked entries due again, their refusals forgotten: relays publish them as if just
     * recorded (and park them again if their messages still fail).
     *
     * @return how many were parked and are due again
     */
    public long retry(Collection<String> ids) {
        Bson which = OutboxStore.ids(ids);
        return mongo("retrying parked entries", () -> store.unpark(which, clock.instant()));
    }

    /** {@link #retry(Collection)} for every parked entry. */
    public long retryAll() {
        return mongo("retrying parked entries", () -> store.unpark(Filters.empty(), clock.instant()));
    }

    /**
     * Drops these parked entries for good: for actions nobody needs any more.
     *
     * @return how many were dropped
     */
    public long purge(Collection<String> ids) {
        Bson which = OutboxStore.ids(ids);
        return mongo("dropping parked entries", () -> store.dropParked(which));
    }

    /** {@link #purge(Collection)} for every parked entry. */
    public long purgeAll() {
        return mongo("dropping parked entries", () -> store.dropParked(Filters.empty()));
    }

    private <T> T mongo(String doing, Supplier<T> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            if (e instanceof InvalidInputException) {
                throw e;
            }
            throw MongoErrors.translate("outbox '" + store.name() + "': " + doing, e);
        }
    }
}
