package dev.orderless.history;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.min;
import static com.mongodb.client.model.Updates.setOnInsert;
import static dev.orderless.history.HistoryFields.ID;

import com.mongodb.MongoException;
import com.mongodb.client.model.UpdateOptions;
import dev.orderless.internal.MongoErrors;
import java.time.Instant;
import java.util.Date;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.conversions.Bson;

/**
 * Whether a history's baseline has begun and whether it is complete, kept in the history collection itself, so
 * that every process that reads the history knows it, whatever lease the baseline ran under:
 *
 * <pre>
 * { _id: "baseline",
 *   how: "taken",              // the live documents are being (or were) taken in; "empty": the live collection
 *                              // was empty, so every entity is recorded from its first operation; "declared": the
 *                              // history was declared on since the collection's first write, nothing was read
 *   begun: ISODate(...),       // when it was decided
 *   complete: ISODate(...) }   // when it became complete; absent while a baseline is under way
 * </pre>
 * Complete never goes back. Its {@code _id} is a string, no record's, so no read of an entity's records meets it.
 */
final class BaselineStatus {
    static final BsonString ID_VALUE = new BsonString("baseline");
    static final String HOW = "how";
    static final String BEGUN = "begun";
    static final String COMPLETE = "complete";
    private static final int ATTEMPTS = 3;

    /** How the baseline was decided. */
    enum How {
        TAKEN("taken"), EMPTY("empty"), DECLARED("declared");

        final String stored;

        How(String stored) {
            this.stored = stored;
        }
    }

    /**
     * @param how      as stored ({@link How})
     * @param begun    when it was decided
     * @param complete when it became complete, if it did
     */
    record Status(String how, Instant begun, Optional<Instant> complete) {
    }

    private BaselineStatus() {
    }

    static Optional<Status> read(History history) {
        BsonDocument doc;
        try {
            doc = history.reads().find(eq(ID, ID_VALUE)).first();
        } catch (RuntimeException e) {
            throw MongoErrors.translate("read the baseline status of " + history.name(), e);
        }
        if (doc == null) {
            return Optional.empty();
        }
        return Optional.of(new Status(doc.isString(HOW) ? doc.getString(HOW).getValue() : "?",
                doc.isDateTime(BEGUN) ? Instant.ofEpochMilli(doc.getDateTime(BEGUN).getValue()) : Instant.EPOCH,
                doc.isDateTime(COMPLETE) ? Optional.of(Instant.ofEpochMilli(doc.getDateTime(COMPLETE).getValue()))
                        : Optional.empty()));
    }

    /** Records that a baseline has begun taking the live documents in, unless a status is there already. */
    static void begin(History history, Instant now) {
        upsert(history, combine(setOnInsert(HOW, How.TAKEN.stored), setOnInsert(BEGUN, Date.from(now))),
                "record that the baseline of " + history.name() + " has begun");
        history.learnt(Vouching.Stage.UNDER_WAY);
    }

    /** Records the baseline complete (begun {@code how}, if it had not begun). */
    static void complete(History history, How how, Instant now) {
        upsert(history, combine(setOnInsert(HOW, how.stored), setOnInsert(BEGUN, Date.from(now)),
                min(COMPLETE, Date.from(now))), "record the baseline of " + history.name() + " complete");
        history.learntComplete();
    }

    private static void upsert(History history, Bson update, String what) {
        for (int attempt = 1; ; attempt++) {
            try {
                history.collection().updateOne(eq(ID, ID_VALUE), update, new UpdateOptions().upsert(true));
                return;
            } catch (MongoException e) {
                // two upserts of one _id at once: one inserts, the other's insert fails; it matches next time
                if (!MongoErrors.isDuplicateKey(e) || attempt == ATTEMPTS) {
                    throw MongoErrors.translate(what, e);
                }
            } catch (RuntimeException e) {
                throw MongoErrors.translate(what, e);
            }
        }
    }
}
