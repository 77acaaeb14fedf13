package dev.orderless.view;

import com.mongodb.MongoException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.apply.BatchResult;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.StoredFields;
import dev.orderless.lease.Lease;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries one source document (from a change event or the bootstrap scan), or one hard delete of a
 * source document, to the view, for one term.
 *
 * <ol>
 *   <li>A document without a positive {@code _v} was not written by orderless: skipped, counted, logged.
 *       A version this term already projected is skipped (see {@link LastProjections}).
 *   <li>Project it, check the {@link ProjectionContract}, write the view operations (guarded by {@code _v}),
 *       by default in one bulk write hinted by {@link LastProjections}. If a write was stale, read the
 *       lease: a successor may have written newer data.
 *   <li>A hard delete applies {@link Contributions#undo}: what the source contributed is taken back.
 *   <li>A failure that belongs to this event (the projection throws, the document is malformed, a view
 *       write is refused as bad input or too large) is tried again, up to {@link FeederOptions#poisonAttempts()}, then the {@link FeederOptions#poison()}
 *       policy decides: dead-letter and go on, or stop with {@link FeederStoppedException}.
 *   <li>A failure that is not the event's propagates and ends the term: any transient MongoDB failure (a
 *       standby takes over, or this feeder retries; never counted against the event), a breach of the projection contract or a refused
 *       configuration ({@code FAILED}), a lost lease (standby).
 * </ol>
 */
final class Projector {
    private static final Logger log = LoggerFactory.getLogger(Projector.class);

    private final GuardedApplier view;
    private final ViewProjection projection;
    private final FeederOptions options;
    private final FeederMetrics metrics;
    private final Lease lease;
    private final Optional<DeadLetters> deadLetters;
    private final Runnable alive;
    private final LastProjections last = new LastProjections();

    Projector(GuardedApplier view, ViewProjection projection, FeederOptions options, FeederMetrics metrics, Lease lease,
              Optional<DeadLetters> deadLetters, Runnable alive) {
        this.view = view;
        this.projection = projection;
        this.options = options;
        this.metrics = metrics;
        this.lease = lease;
        this.deadLetters = deadLetters;
        this.alive = alive;
    }

    /** The source document as it is now. */
    void document(BsonDocument doc) {
        BsonValue id = doc.get(StoredFields.ID);
        BsonValue v = doc.get(StoredFields.VERSION);
        if (v == null || !v.isNumber() || v.asNumber().longValue() <= 0) {
            metrics.skipped();
            log.warn("'{}': source document {} has no positive {}; not written by orderless, skipped",
                    options.resource(), id, StoredFields.VERSION);
            return;
        }
        long version = v.asNumber().longValue();
        if (id != null && id.isString() && last.version(id.asString().getValue()).orElse(0) >= version) {
            metrics.skipped();
            return;
        }
        List<List<Operation>> written = new ArrayList<>(1);
        attempt(id, version, "project", () -> {
            if (id == null || !id.isString()) {
                throw new IllegalArgumentException("the source _id is " + (id == null ? "missing" : "a "
                        + id.getBsonType()) + "; a view's elements and documents are keyed by string ids");
            }
            String source = id.asString().getValue();
            List<Operation> ops = projection.project(doc, version);
            ProjectionContract.check(options.resource(), source, version, ops);
            write(ops, last.placedBefore(source), "a stale view write");
            written.add(ops);
        });
        if (id != null && id.isString()) {
            last.projected(id.asString().getValue(), version, written.isEmpty() ? List.of() : written.get(0));
        }
    }

    /** The source document {@code id} was deleted (not by orderless: a TTL index, an admin, any hard delete). */
    void deleted(BsonValue id) {
        if (id == null || !id.isString()) {
            metrics.skipped();
            log.warn("'{}': a source document with a non-string _id {} was deleted; it cannot be in the view, skipped",
                    options.resource(), id);
            return;
        }
        String source = id.asString().getValue();
        long seen = last.version(source).orElse(0);
        boolean done = attempt(id, seen, "take back", () -> {
            List<Operation> undo = Contributions.undo(view, source, seen);
            write(undo, op -> false, "a stale write taking back a deleted source");
            log.debug("'{}': source document '{}' was deleted; {} view entries taken back", options.resource(), source,
                    undo.size());
        });
        last.forget(source);
        if (done) {
            metrics.sourceDeleted();
        }
    }

    /**
     * Writes {@code ops}: in one bulk write ({@link FeederOptions.Writes#BULK}, hinted with what the source's
     * previous version placed) or one at a time. The first refusal or failure is thrown once every op was
     * tried: {@link #attempt} tries the whole event again, which the guards make harmless.
     */
    private void write(List<Operation> ops, Predicate<Operation> placedBefore, String staleMeans) {
        boolean stale = false;
        if (options.writes() == FeederOptions.Writes.ONE_AT_A_TIME) {
            for (Operation op : ops) {
                Outcome outcome = view.apply(op);
                metrics.write(outcome);
                stale |= !outcome.isApplied();
            }
        } else if (!ops.isEmpty()) {
            RuntimeException failure = null;
            for (BatchResult result : view.applyAll(ops, placedBefore)) {
                if (result instanceof BatchResult.Done done) {
                    metrics.write(done.outcome());
                    stale |= !done.outcome().isApplied();
                } else if (failure == null) {
                    failure = result instanceof BatchResult.Refused refused ? refused.reason()
                            : ((BatchResult.Failed) result).error();
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
        // a stale write may mean a successor already wrote newer data: are we still the owner?
        if (stale && !lease.verify()) {
            throw new LeaseLostException(staleMeans);
        }
    }

    /** Runs {@code work}, trying again on the event's own failures; false if it ended dead-lettered. */
    private boolean attempt(BsonValue id, long version, String what, Runnable work) {
        RuntimeException last = null;
        for (int attempt = 1; attempt <= options.poisonAttempts(); attempt++) {
            if (attempt > 1) {
                alive.run();
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50L * attempt));
            }
            try {
                work.run();
                return true;
            } catch (LeaseLostException | InvalidConfigurationException | FeederStoppedException e) {
                throw e;
            } catch (TransientException e) {
                // never the event's fault: a passing blip would dead-letter a good event. The term ends and
                // resumes here; the feeder's bound on terms without progress keeps that from going on for ever
                throw e;
            } catch (MongoException e) {
                throw e;   // a read or dead-letter write that failed: the backend's trouble, not the event's
            } catch (RuntimeException e) {
                last = e;
            }
            metrics.attemptFailed();
            log.warn("'{}': {} source document {} at _v {} failed (attempt {} of {}): {}", options.resource(), what, id,
                    version, attempt, options.poisonAttempts(), reason(last));
        }
        poison(id, version, what, reason(last));
        return false;
    }

    private void poison(BsonValue id, long version, String what, String reason) {
        if (options.poison() == FeederOptions.PoisonPolicy.FAIL || deadLetters.isEmpty()) {
            throw new FeederStoppedException("feeder '" + options.resource() + "': cannot " + what + " source document "
                    + id + " at _v " + version + " (" + options.poisonAttempts() + " attempts): " + reason
                    + ". Fix the document or the projection and restart the feeder, or use PoisonPolicy.DEAD_LETTER");
        }
        DeadLetters letters = deadLetters.get();
        boolean recorded = letters.record(id == null ? org.bson.BsonNull.VALUE : id, version, reason,
                options.poisonAttempts(), lease.owner(), lease.fence());
        if (recorded) {
            metrics.deadLettered();
        }
        log.error("'{}': dead-lettered source document {} at _v {} after {} attempts to {} it, recorded in '{}': {}. {}",
                options.resource(), id, version, options.poisonAttempts(), what, letters.name(), reason,
                "project".equals(what) ? "The view skips this version; the document's next version heals it"
                        : "Its entries stay in the view until removed by hand");
    }

    private static String reason(RuntimeException e) {
        String message = e.getMessage() == null ? "" : ": " + e.getMessage();
        return (e.getClass().getSimpleName() + message).replaceAll("[\\r\\n\\t]+", " ").strip();
    }
}
