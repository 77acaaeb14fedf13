package dev.orderless.history;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.internal.LeasedPasses;
import dev.orderless.lease.LeaseProvider;
import io.micrometer.core.instrument.Counter;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The baseline of a history turned on for a collection that already has data ({@link History#baseline}), run
 * once across every process that runs it: under the lease {@code history-baseline:<history collection>} (see
 * {@link LeasedPasses}), one pass at a time, at most one starting per interval. A pass keeps in the lease the
 * last entity it finished ({@code progress.after}, every {@value #SAVE_EVERY} entities and when it ends), so the
 * next pass, wherever it runs, resumes after it; the pass that reaches the end records the baseline complete in
 * the history collection itself ({@link History#baselineComplete()}, which every process reading the history
 * knows), and no pass runs after that. Each entity is taken guarded, so a pass is harmless to repeat, to run while
 * consumers run, or to leave half done.
 *
 * <p>Decide it with {@link History#beginBaseline} before the consumers that record start, then run it from their
 * start (it may run beside them): Spring Boot does both, with {@code orderless.history.enabled=true}. On an empty
 * collection it completes at once, with nothing to take in. Until it is complete, a read of an entity it has not
 * taken in says it cannot tell: the entity may have had operations before the history was on, whose effects
 * recorded ones have overwritten since.
 */
public final class HistoryBaseline {
    static final int SAVE_EVERY = 100;
    static final String AFTER = "after";

    private final History history;
    private final LeasedPasses passes;
    private final Clock clock;
    private final Counter runs;
    private final Counter baselined;
    private final Counter joined;
    private final Counter vouched;
    private final Counter unreadable;
    private volatile boolean complete;

    private HistoryBaseline(History history, LeasedPasses passes) {
        this.history = history;
        this.passes = passes;
        this.clock = history.options().clock();
        this.runs = Counter.builder("orderless.history.baseline.passes").description("history baseline passes run")
                .tag("collection", history.name()).register(history.options().meters());
        this.baselined = taken("baselined");
        this.joined = taken("joined");
        this.vouched = taken("vouched");
        this.unreadable = taken("unreadable");
    }

    private Counter taken(String outcome) {
        return Counter.builder("orderless.history.baseline.entities")
                .description("live documents taken into the history by the baseline, by what became of them")
                .tag("collection", history.name()).tag("outcome", outcome).register(history.options().meters());
    }

    /**
     * A baseline runner for {@code history}, clocked by its options' clock; it runs nothing until asked
     * ({@link #runIfDue()}).
     *
     * @param history  the history, knowing its live collection ({@link History#withLive})
     * @param leases   where the lease {@code history-baseline:<history collection>} is held
     * @param owner    this process, unique per incarnation
     * @param interval the least time between the starts of two passes, when one ended before the end (its lease
     *                 lost, stopped, or failed)
     * @return the runner
     * @throws InvalidConfigurationException if {@code history} or {@code leases} is null, the history does not know
     *                                       its live collection, {@code owner} is empty, or {@code interval} is not
     *                                       a positive duration
     */
    public static HistoryBaseline create(History history, LeaseProvider leases, String owner, Duration interval) {
        if (history == null) {
            throw new InvalidConfigurationException("history baseline: history is required");
        }
        if (history.live().isEmpty()) {
            throw new InvalidConfigurationException("history baseline of " + history.name() + ": the history does not"
                    + " know its live collection; give it with History.withLive(collection)");
        }
        return new HistoryBaseline(history, LeasedPasses.create("history baseline", leases,
                "history-baseline:" + history.name(), owner, interval, history.options().clock()));
    }

    /**
     * The least time between the starts of two passes, across every process.
     *
     * @return the {@code interval} given to {@link #create}
     */
    public Duration interval() {
        return passes.interval();
    }

    /**
     * True once this process learnt that the baseline is complete (its own pass, another process's, or at once by
     * {@link History#beginBaseline}); no round trip.
     *
     * @return true once known complete; false may be out of date (another process may have completed it)
     */
    public boolean complete() {
        if (!complete && history.knownComplete()) {
            complete = true;
        }
        return complete;
    }

    /** Ends a pass under way after the entity it is on; later asks do nothing until {@link #resume()}. */
    public void stop() {
        passes.stop();
    }

    /** Undoes {@link #stop()}: later asks run a pass again when one is due. */
    public void resume() {
        passes.resume();
    }

    /** How a history starts on its live collection ({@link History#beginBaseline}). */
    public enum Start {
        /**
         * Tell from the collections: an empty live collection with an empty history needs no baseline (complete at
         * once); a live collection with documents and an empty history was consumed without it (a baseline begins);
         * both with data and no baseline ever begun cannot be told apart ({@link Begun#UNDECIDED}): a history on
         * since the collection's first write, or one turned on over existing data whose baseline never ran.
         */
        DETECT,
        /** Take the live documents in (a baseline begins; complete at once on an empty live collection). */
        RUN,
        /**
         * The history has been on since the collection's first write, with every consumer recording: the baseline is
         * recorded complete without reading anything, and reads answer wherever the records explain the live
         * documents. Refused while a baseline that began is not complete.
         */
        DECLARE_COMPLETE
    }

    /** What {@link History#beginBaseline} found or decided. */
    public enum Begun {
        /** Complete (now or before): nothing more to run. */
        COMPLETE,
        /** A baseline has begun and is not complete: run it ({@link #runIfDue()}) until it is. */
        UNDER_WAY,
        /**
         * {@link Start#DETECT} could not tell: nothing was written; begin again with {@link Start#RUN} or
         * {@link Start#DECLARE_COMPLETE}.
         */
        UNDECIDED
    }

    /** True if this process knows the baseline is complete, asking the history (a read) until it is. */
    private boolean learntComplete() {
        if (!complete && history.baselineComplete()) {
            complete = true;
        }
        return complete;
    }

    /**
     * Runs or resumes the baseline, unless it is complete, another process is running it, or a pass began within
     * the interval; what this pass did.
     *
     * @return what the pass did, or empty if none ran (complete, not due, stopped, or the lease held elsewhere)
     */
    public Optional<BaselinePass> runIfDue() {
        if (complete()) {
            return Optional.empty();   // no round trip once it is known to be done
        }
        Optional<BaselinePass> pass = passes.<Optional<BaselinePass>>runHeldIfDue(hold -> {
            if (learntComplete()) {
                return Optional.empty();   // another process's pass reached the end
            }
            Optional<BsonDocument> saved = hold.saved();
            if (saved.isEmpty() && history.liveIsEmpty()) {   // nothing to take in: all is recorded from the start
                BaselineStatus.complete(history, BaselineStatus.How.EMPTY, clock.instant());
                complete = true;
                return Optional.of(new BaselinePass(0, 0, 0, 0, 0, true));
            }
            Optional<String> after = saved.filter(p -> p.isString(AFTER)).map(p -> p.getString(AFTER).getValue());
            AtomicReference<String> last = new AtomicReference<>(after.orElse(null));
            AtomicLong unsaved = new AtomicLong();
            BaselinePass done = new Baselining(history).pass(after, hold, entity -> {
                last.set(entity);
                if (unsaved.incrementAndGet() >= SAVE_EVERY) {
                    unsaved.set(0);
                    hold.save(new BsonDocument(AFTER, new BsonString(entity)));
                }
            });
            hold.save(last.get() == null ? new BsonDocument() : new BsonDocument(AFTER, new BsonString(last.get())));
            if (done.complete()) {
                complete = true;   // recorded in the history by the pass
            }
            return Optional.of(done);
        }).flatMap(p -> p);
        pass.ifPresent(done -> {
            runs.increment();
            baselined.increment(done.baselined());
            joined.increment(done.joined());
            vouched.increment(done.vouched());
            unreadable.increment(done.unreadable());
        });
        return pass;
    }
}
