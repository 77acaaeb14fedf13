package dev.orderless.history;

import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Sorts.ascending;

import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.StoredFields;
import dev.orderless.internal.MongoErrors;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The baseline: the live documents taken into the history, so that the history can vouch for the entities
 * that had operations before it was on. Without it, such an entity's records do not start from an empty
 * document, and no state of it can be told from them.
 *
 * <p>Per live document, in {@code _id} order:
 * <ol>
 *   <li>Read from it the state and the highest seq it shows, {@code H} (a register's last assignment, an element's
 *       or a tombstone's seq, {@code _floor}, {@code _gcFloor}): every operation applied to it had a seq at or
 *       below {@code H}, since an applied operation's effect is overwritten only by a higher seq.
 *   <li>No folded state yet: insert the document's state as the entity's folded state as of {@code H}, marked as
 *       taken by the baseline ({@link Records#baseline}). The insert is the guard: a duplicate key means that a
 *       retention pass or another baseline wrote one first, and the entity is taken again from step 3.
 *   <li>A folded state the baseline took before, whose records and state account for everything the document
 *       shows ({@link History#unexplained}): nothing to do, so a repeated pass changes nothing. Otherwise (a
 *       state folded by retention, which was folded from records only; or state applied since without being
 *       recorded) the folded state becomes the join of both, as of the higher horizon, written guarded by the
 *       whole folded record as read ({@link Records#unchanged}), and read again if another writer came first.
 * </ol>
 * A document that cannot be read as an orderless state (an entry of a set that is not a document, or whose key is
 * not a string, or a set that is no array: the applier refuses to write to such a document) is not taken: its folded state is marked with why
 * ({@link Baseline#unreadable()}; a WARN line names it), so that no read vouches for it and a rebuild leaves it
 * out, and the pass goes on. A pass after it was repaired takes it in (step 3).
 *
 * <p>Why consumers may run meanwhile: each one records an operation before it applies it, and a read of the
 * history merges every record at or below a baseline's horizon into its state ({@link Loaded}). So an operation
 * recorded before the document was read and applied after (not in the state) is merged; one applied before it
 * was read is in the state, and merging its record (or a redelivery's) changes nothing; one recorded after is
 * merged or above the horizon. None of this depends on when the document is read, or on any clock. What the
 * baseline cannot see: an operation applied after it read the document by a consumer that does not record (a
 * rolling upgrade's older instances); a read of that entity then says it cannot tell if its live document shows
 * it, and a repeated pass joins it in.
 */
final class Baselining {
    private static final Logger log = LoggerFactory.getLogger(Baselining.class);
    private static final int ATTEMPTS = 5;

    private enum Taken { BASELINED, JOINED, VOUCHED, UNREADABLE, NOTHING }

    private final History history;

    Baselining(History history) {
        this.history = history;
    }

    /**
     * Takes every live document with an {@code _id} after {@code after} (all if empty), telling {@code done} each
     * entity it finished; stops early, and says so, when {@code keepGoing} says no. Records in the history that a
     * baseline has begun, and, if it reached the end, that it is complete ({@link BaselineStatus}): a pass runs
     * once every consumer records, so every entity written after the pass passed it is recorded from its first
     * operation, and with the entities before it taken in, every entity is accounted for.
     */
    BaselinePass pass(Optional<String> after, BooleanSupplier keepGoing, Consumer<String> done) {
        MongoCollection<BsonDocument> live = history.live().orElseThrow(() -> new InvalidConfigurationException(
                "history baseline of " + history.name() + ": the history does not know its live collection; give it"
                        + " with History.withLive(collection)"))
                .withReadPreference(ReadPreference.primary()).withReadConcern(ReadConcern.LOCAL);
        history.ensureIndexed();
        BaselineStatus.begin(history, history.options().clock().instant());   // from now on, reads know it is under way
        long documents = 0;
        long[] taken = new long[Taken.values().length];
        Bson from = after.<Bson>map(id -> gt(StoredFields.ID, id)).orElse(new BsonDocument());
        try (MongoCursor<BsonDocument> docs = live.find(from).sort(ascending(StoredFields.ID)).iterator()) {
            while (docs.hasNext()) {
                if (!keepGoing.getAsBoolean()) {
                    return finish(documents, taken, false);
                }
                BsonDocument doc = docs.next();
                documents++;
                BsonValue id = doc.get(StoredFields.ID);
                if (id == null || !id.isString()) {
                    continue;   // not an entity document orderless writes
                }
                taken[take(id.asString().getValue(), doc).ordinal()]++;
                done.accept(id.asString().getValue());
            }
        } catch (MongoException e) {
            throw MongoErrors.translate("read the live documents of " + history.name() + " for its baseline", e);
        }
        // every document there when the history was turned on is behind this pass or an earlier one
        BaselineStatus.complete(history, BaselineStatus.How.TAKEN, history.options().clock().instant());
        return finish(documents, taken, true);
    }

    private Taken take(String entity, BsonDocument doc) {
        Map<Long, String> shown = LiveDocument.seqs(doc, history.schema());
        long horizon = LiveDocument.horizon(shown);
        Optional<String> unreadable = EntityState.unreadable(doc, history.schema());
        EntityState state = null;
        if (unreadable.isEmpty()) {
            try {
                state = EntityState.of(doc, history.schema());
            } catch (RuntimeException e) {
                unreadable = Optional.of(e.toString());   // a shape the check does not know: the same to the history
            }
        }
        if (horizon == 0 && unreadable.isEmpty() && state.registers().isEmpty() && state.counters().isEmpty()) {
            return Taken.NOTHING;   // no operation was ever applied to it, and it holds no value one could build on
        }
        if (unreadable.isPresent()) {
            log.warn("{}: the live document of '{}' cannot be read as an orderless state ({}); the baseline takes"
                    + " nothing of it: its reads say they cannot tell and a rebuild leaves it out, until it is repaired"
                    + " and a baseline pass (History.baseline) takes it in", history.name(), entity, unreadable.get());
        }
        Instant now = history.options().clock().instant();
        MongoCollection<BsonDocument> records = history.collection();
        String what = "take the live document of '" + entity + "' into the history " + history.name();
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            Loaded loaded = history.load(entity);   // after the document: its records include all it shows
            try {
                Optional<Taken> done = unreadable.isPresent() ? unreadable(loaded, doc, horizon, unreadable.get(), now)
                        : readable(loaded, doc, horizon, state, now);
                if (done.isPresent()) {
                    return done.get();
                }
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw MongoErrors.translate(what, e);
                }
            } catch (RuntimeException e) {
                throw MongoErrors.translate(what, e);
            }
            // another writer changed its folded state since it was read: read it again
        }
        throw new TransientException(what + ": its folded state changed under each of " + ATTEMPTS + " attempts;"
                + " run the baseline again");
    }

    /** Takes {@code state} (of {@code doc}) in; empty if another writer changed the folded state first. */
    private Optional<Taken> readable(Loaded loaded, BsonDocument doc, long horizon, EntityState state, Instant now) {
        if (loaded.record().isEmpty()) {
            history.collection().insertOne(Records.baseline(state, LiveDocument.ledger(doc, history.schema()),
                    horizon, new Baseline(horizon, LiveDocument.gcFloor(doc), LiveDocument.version(doc), now), now));
            return Optional.of(Taken.BASELINED);
        }
        if (loaded.baseline().isPresent() && loaded.unreadable().isEmpty()
                && history.unexplained(loaded, Optional.of(doc)).isEmpty()) {
            return Optional.of(Taken.VOUCHED);
        }
        long joinedHorizon = Math.max(loaded.horizon(), horizon);
        long compacted = Math.max(loaded.baseline().map(Baseline::compacted).orElse(0L), LiveDocument.gcFloor(doc));
        Ledger ledger = LiveDocument.ledger(doc, history.schema());
        Loaded.Merged joined = Loaded.keepBeforeOrderless(Loaded.merge(history.model(), loaded.folded(),
                loaded.ledger(), ledger, Rebuilder.standingFor(state, ledger)), state, history.schema());
        return replace(loaded, Records.baseline(joined.state(), joined.ledger(), joinedHorizon,
                new Baseline(joinedHorizon, compacted, LiveDocument.version(doc), now), now), Taken.JOINED);
    }

    /**
     * Records that {@code doc} could not be read: the folded state stays what the history had (empty if nothing),
     * marked with why, so that no read vouches for the entity; empty if another writer changed it first.
     */
    private Optional<Taken> unreadable(Loaded loaded, BsonDocument doc, long horizon, String why, Instant now) {
        if (loaded.unreadable().isPresent()) {
            return Optional.of(Taken.UNREADABLE);   // marked by an earlier pass
        }
        long marked = Math.max(loaded.horizon(), horizon);
        long compacted = Math.max(loaded.baseline().map(Baseline::compacted).orElse(0L), LiveDocument.gcFloor(doc));
        BsonDocument next = Records.baseline(loaded.folded(), loaded.ledger(), marked, new Baseline(marked, compacted,
                LiveDocument.version(doc), now, Optional.of(why)), now);
        if (loaded.record().isEmpty()) {
            history.collection().insertOne(next);
            return Optional.of(Taken.UNREADABLE);
        }
        return replace(loaded, next, Taken.UNREADABLE);
    }

    private Optional<Taken> replace(Loaded loaded, BsonDocument next, Taken taken) {
        return history.collection().replaceOne(Records.unchanged(loaded.record().get()), next).getMatchedCount() > 0
                ? Optional.of(taken) : Optional.empty();
    }

    private BaselinePass finish(long documents, long[] taken, boolean complete) {
        BaselinePass pass = new BaselinePass(documents, taken[Taken.BASELINED.ordinal()], taken[Taken.JOINED.ordinal()],
                taken[Taken.VOUCHED.ordinal()], taken[Taken.UNREADABLE.ordinal()], complete);
        log.info("{}: baseline read {} live documents: {} taken into the history, {} joined with the state it had, {}"
                        + " already vouched for, {} unreadable (not taken in){}", history.name(), pass.documents(),
                pass.baselined(), pass.joined(), pass.vouched(), pass.unreadable(),
                complete ? "" : " (pass ended early)");
        return pass;
    }
}
