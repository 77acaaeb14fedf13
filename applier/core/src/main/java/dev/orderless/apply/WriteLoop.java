package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.result.UpdateResult;
import dev.orderless.CannotApplyException;
import dev.orderless.TransientException;
import dev.orderless.internal.MongoErrors;
import io.micrometer.core.instrument.Counter;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write-read loop of one operation (see {@link GuardedApplier} for the algorithm): send the plan's
 * write; if it matched nothing, read the document and let the plan decide the outcome or the next write.
 */
final class WriteLoop {
    private static final Logger log = LoggerFactory.getLogger(WriteLoop.class);
    private final MongoCollection<BsonDocument> collection;
    private final MongoCollection<BsonDocument> reads;
    private final String name;
    private final int maxAttempts;
    private final Counter retries;
    private final CollectionSchema schema;
    private final Counter brokenInvariants;

    WriteLoop(MongoCollection<BsonDocument> collection, MongoCollection<BsonDocument> reads, String name, int maxAttempts,
              Counter retries, CollectionSchema schema, Counter brokenInvariants) {
        this.collection = collection;
        this.reads = reads;
        this.name = name;
        this.maxAttempts = maxAttempts;
        this.retries = retries;
        this.schema = schema;
        this.brokenInvariants = brokenInvariants;
    }

    /**
     * {@code doc}, read to decide an op, checked for elements with more than one entry ({@link DuplicateEntries}):
     * each such document is logged at ERROR and counted in {@code orderless.apply.invariant.broken}; the plans
     * read such an element as its highest seq.
     */
    BsonDocument inspected(BsonDocument doc) {
        if (doc != null) {
            List<DuplicateEntries.Duplicate> duplicates = DuplicateEntries.in(doc, schema);
            if (!duplicates.isEmpty()) {
                brokenInvariants.increment();
                log.error(DuplicateEntries.describe(name, String.valueOf(doc.get(StoredFields.ID)), duplicates));
            }
        }
        return doc;
    }

    /**
     * The write-read loop. Progress detection: a write chosen from a document that then fails against the
     * very same document (re-read, equal) can never succeed, since the plan would choose it again; that is
     * a disagreement between MongoDB and this code (a collation, a stored value of another type), not
     * contention, and it ends at once with {@code NO_PROGRESS}. Any other failed write means the document
     * changed, so someone else made progress; {@link ApplierOptions#maxAttempts()} bounds that anyway.
     */
    Outcome run(Operation op, WritePlan plan, Optional<Optional<BsonDocument>> alreadyRead) {
        Optional<WritePlan.Write> next = alreadyRead.isPresent() ? Optional.empty() : plan.first();
        boolean read = false;
        BsonDocument current = null;   // the document the next write was chosen from; null when absent
        int attempts = 0;
        if (alreadyRead.isPresent()) {   // a batch wrote this op's first write and read its document
            read = true;
            current = alreadyRead.get().orElse(null);
            WritePlan.Step step = decide(op, plan, current);
            if (step instanceof WritePlan.Step.Done done) {
                return done.outcome();
            }
            next = Optional.of(((WritePlan.Step.Next) step).write());
        }
        while (true) {
            if (next.isPresent()) {
                WritePlan.Write write = next.get();
                if (write(op, write)) {
                    return Outcome.APPLIED;
                }
                retried();
                BsonDocument after = read(op).orElse(null);
                if (read && Objects.equals(after, current)) {
                    throw noProgress(op, write, after);
                }
                if (++attempts >= maxAttempts) {
                    throw gaveUp(op, attempts);
                }
                current = after;
            } else {
                current = read(op).orElse(null);
            }
            read = true;
            WritePlan.Step step = decide(op, plan, current);
            if (step instanceof WritePlan.Step.Done done) {
                return done.outcome();
            }
            next = Optional.of(((WritePlan.Step.Next) step).write());
        }
    }

    /** A write matched nothing and a read follows: counted in {@code orderless.apply.retries}. */
    void retried() {
        retries.increment();
    }

    int maxAttempts() {
        return maxAttempts;
    }

    TransientException gaveUp(Operation op, int attempts) {
        return new TransientException("gave up on " + name + " '" + op.entity() + "' seq " + op.seq()
                + " after " + attempts + " contended writes; it was not applied, retry it");
    }

    /** The plan's decision from {@code current} (null when absent); a document it cannot read is no progress. */
    WritePlan.Step decide(Operation op, WritePlan plan, BsonDocument current) {
        Optional<String> unreadable = current == null ? Optional.empty() : EntityState.unreadable(current, schema);
        if (unreadable.isPresent()) {
            // refused, not guessed: a write chosen past it would mix entries into a value another program wrote
            throw new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "no progress: " + describe(op)
                    + ": " + unreadable.get() + ", which orderless cannot read: migrate it (docs/operations.md)");
        }
        try {
            return plan.afterRead(Optional.ofNullable(current));
        } catch (CannotApplyException e) {
            throw e;   // the plan's own refusal, in its own words
        } catch (RuntimeException e) {
            throw new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "no progress: " + describe(op)
                    + ": the stored document cannot be read as an orderless document: " + e, e);
        }
    }

    /** {@code write}, chosen from {@code unchanged}, matched nothing on that very document. */
    CannotApplyException noProgress(Operation op, WritePlan.Write write, BsonDocument unchanged) {
        BsonValue v = unchanged == null ? null : unchanged.get(StoredFields.VERSION);
        Object version = unchanged == null ? "absent" : v == null ? "missing" : v.isNumber() ? v.asNumber().longValue()
                : "of type " + v.getBsonType().name().toLowerCase(java.util.Locale.ROOT);
        return new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "no progress: " + write.shape()
                + " write on " + name + " '" + op.entity() + "' seq " + op.seq() + " refused twice on an unchanged"
                + " document (_v " + version + "): MongoDB and orderless disagree about it; check its stored"
                + " fields and the collection's collation and validators");
    }

    private boolean write(Operation op, WritePlan.Write write) {
        try {
            UpdateResult result = collection.updateOne(write.filter(), write.update(),
                    new UpdateOptions().upsert(write.upsert()));
            return result.getMatchedCount() > 0 || result.getUpsertedId() != null;
        } catch (MongoException e) {
            if (MongoErrors.isDuplicateKey(e)) {
                String index = MongoErrors.duplicateKeyIndex(e).orElse(MongoErrors.ID_INDEX);
                if (write.upsert() && index.equals(MongoErrors.ID_INDEX)) {
                    return false;   // a concurrent first write of this entity won the insert
                }
                throw new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "no progress: unique index '"
                        + index + "' on " + name + " refuses the " + write.shape() + " write of '" + op.entity()
                        + "' seq " + op.seq() + "; orderless needs _id to be the only unique key", e);
            }
            throw MongoErrors.translate(describe(op), e);
        } catch (RuntimeException e) {
            throw MongoErrors.translate(describe(op), e);
        }
    }

    private Optional<BsonDocument> read(Operation op) {
        try {
            return Optional.ofNullable(inspected(reads.find(eq(StoredFields.ID, op.entity())).first()));
        } catch (RuntimeException e) {
            throw MongoErrors.translate(describe(op), e);
        }
    }

    String describe(Operation op) {
        return "apply to " + name + " '" + op.entity() + "' seq " + op.seq();
    }
}
