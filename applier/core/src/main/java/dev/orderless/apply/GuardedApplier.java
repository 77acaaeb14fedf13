package dev.orderless.apply;

import static com.mongodb.client.model.Updates.inc;

import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;
import dev.orderless.CannotApplyException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.internal.MongoErrors;
import io.micrometer.core.instrument.Counter;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies stamped operations to entity documents so that the stored state is the same for any delivery
 * order, any number of duplicates and any number of concurrent appliers: the state of applying the
 * entity's operations once each in increasing seq order. No locks, and no read before the common-case
 * write; safe to share between threads.
 *
 * <p>The algorithm, per operation:
 * <ol>
 *   <li>Validate it against the {@link CollectionSchema} (undeclared or forbidden fields throw
 *       {@link dev.orderless.InvalidInputException} and nothing is written).
 *   <li>Send one guarded {@code updateOne}: a filter that matches only if the operation is newer than
 *       everything it would overwrite, an update that moves the element or sets the register and
 *       increments {@code _v}, with upsert so the first write creates the document.
 *   <li>If that matched nothing (or the upsert hit a duplicate {@code _id}, which happens both when the
 *       operation is stale and when a concurrent first write of the entity won the insert), read the
 *       document and decide: stale (return why), or a different write shape to try. Every lost race is
 *       caused by another operation's success, so the loop ends; {@link ApplierOptions#maxAttempts()}
 *       bounds it anyway.
 *   <li>If a write chosen from a document fails against that same document, unchanged, nobody made
 *       progress and nobody will: MongoDB and this code disagree about it. That ends at once with a
 *       {@link CannotApplyException} of kind {@code NO_PROGRESS}, as does a duplicate key from a unique
 *       index other than {@code _id}.
 * </ol>
 * Reads go to the primary with read concern local, so they see the applier's own writes whatever the
 * collection's read preference. {@link #create} refuses a collection with a non-simple default collation.
 * Every exception a read or write can throw leaves as one of: {@link TransientException} (with
 * {@link TransientException#backendDown()}), {@link CannotApplyException} (bad input, no progress, too
 * large; counted in {@code orderless.apply.refused{collection,kind}}) or
 * {@link InvalidConfigurationException} (see {@link MongoErrors}).
 * See {@link SetPlan}, {@link AssignPlan} and {@link DeletePlan} for each operation's guard, and
 * {@link StoredFields} for the stored document. Outcomes are returned, never thrown, and counted in
 * {@code orderless.apply.outcomes{collection,outcome}}.
 *
 * <p>Use a collection with write concern majority if the state must survive a primary failover.
 */
public final class GuardedApplier {
    private static final Logger log = LoggerFactory.getLogger(GuardedApplier.class);
    private static final int PROBE_ATTEMPTS = 3;
    private static final String PROBE_ID = "\u0000orderless-probe";

    private final MongoCollection<BsonDocument> collection;
    /** Reads see the applier's own acknowledged writes, whatever the collection's defaults. */
    private final MongoCollection<BsonDocument> reads;
    private final CollectionSchema schema;
    private final ApplierOptions options;
    private final String name;
    private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
    private final Map<CannotApplyException.Kind, Counter> refused = new EnumMap<>(CannotApplyException.Kind.class);
    private final WriteLoop loop;
    private final java.util.Set<String> rankedNames;
    private volatile boolean collectionChecked;

    private GuardedApplier(MongoCollection<BsonDocument> collection, CollectionSchema schema, ApplierOptions options) {
        if (collection == null || schema == null || options == null) {
            throw new InvalidConfigurationException("applier: collection, schema and options are all required");
        }
        if (!collection.getWriteConcern().isAcknowledged()) {
            throw new InvalidConfigurationException("applier: collection " + collection.getNamespace().getCollectionName()
                    + " has an unacknowledged write concern (w: 0); the applier must know whether each guarded write"
                    + " matched: use w: 1 or w: majority");
        }
        this.collection = collection;
        this.reads = collection.withReadPreference(ReadPreference.primary()).withReadConcern(ReadConcern.LOCAL);
        this.schema = schema;
        this.options = options;
        this.name = collection.getNamespace().getCollectionName();
        for (Outcome outcome : Outcome.values()) {
            outcomes.put(outcome, Counter.builder("orderless.apply.outcomes")
                    .description("operations applied or found stale, by outcome")
                    .tag("collection", name).tag("outcome", outcome.tag())
                    .register(options.meters()));
        }
        for (CannotApplyException.Kind kind : CannotApplyException.Kind.values()) {
            refused.put(kind, Counter.builder("orderless.apply.refused")
                    .description("operations that can never be applied, by kind")
                    .tag("collection", name).tag("kind", kind.tag()).register(options.meters()));
        }
        this.rankedNames = java.util.Set.copyOf(schema.ranked().stream().map(RankedField::field).toList());
        this.loop = new WriteLoop(collection, reads, name, options.maxAttempts(), Counter.builder("orderless.apply.retries")
                .description("guarded writes that matched nothing and were followed by a read")
                .tag("collection", name).register(options.meters()), schema,
                Counter.builder("orderless.apply.invariant.broken")
                        .description("documents read with an element that has more than one entry (written from outside)")
                        .tag("collection", name).register(options.meters()));
        CollectionChecks.codecs(collection);
        try {
            checkCollection();
        } catch (TransientException e) {
            log.warn("could not check collection {} now ({}); it is checked again before the first apply",
                    name, e.getMessage());
        }
    }

    /**
     * An applier with {@link ApplierOptions#ofDefaults()}.
     *
     * @param collection the entity collection, with an acknowledged write concern
     * @param schema     the fields its documents may hold
     * @return the applier
     * @throws InvalidConfigurationException as {@link #create(MongoCollection, CollectionSchema, ApplierOptions)}
     *                                       does
     */
    public static GuardedApplier create(MongoCollection<BsonDocument> collection, CollectionSchema schema) {
        return new GuardedApplier(collection, schema, ApplierOptions.ofDefaults());
    }

    /**
     * An applier for {@code collection}, checked before it applies anything. A check MongoDB cannot answer now
     * is logged and made again before the first apply.
     *
     * @param collection the entity collection, with an acknowledged write concern
     * @param schema     the fields its documents may hold
     * @param options    clock, attempts and meters
     * @return the applier
     * @throws InvalidConfigurationException if an argument is {@code null}, the write concern is unacknowledged,
     *                                       the collection's codec registry cannot encode orderless' queries, or
     *                                       its default collation is not simple
     */
    public static GuardedApplier create(MongoCollection<BsonDocument> collection, CollectionSchema schema,
                                        ApplierOptions options) {
        return new GuardedApplier(collection, schema, options);
    }

    /**
     * The schema every operation is validated against.
     *
     * @return the schema given to {@link #create}
     */
    public CollectionSchema schema() {
        return schema;
    }

    /**
     * The collection it writes, set up for reads that must see its writes (the primary, read concern
     * local): a view feeder reads what a source contributed through it.
     *
     * @return the collection, reading from the primary with read concern local
     */
    public MongoCollection<BsonDocument> reads() {
        return reads;
    }

    /**
     * Refuses {@code op} as {@link #apply} would before writing anything (a field the schema does not
     * declare, a forbidden name), counted the same way; does nothing for an op {@code apply} would write. For
     * callers that must know an op is valid before they write anything else of it (the history records it
     * first).
     *
     * @param op the operation to check
     * @throws dev.orderless.InvalidInputException if {@code op} names a field the schema does not allow
     */
    public void validate(Operation op) {
        try {
            schema.validate(op);
        } catch (CannotApplyException e) {
            refused(e);
            throw e;
        }
    }

    /**
     * Applies {@code op} at most once, whatever has been applied before.
     *
     * @param op the operation to apply
     * @return {@link Outcome#APPLIED} or why not
     * @throws dev.orderless.InvalidInputException if {@code op} names a field the schema does not allow
     * @throws CannotApplyException if MongoDB can never apply it (no progress on this document, too large)
     * @throws InvalidConfigurationException if MongoDB refuses it for a reason of set-up (roles, collation)
     * @throws TransientException if MongoDB is unavailable or the document too contended; nothing was
     *                            lost, and applying the same operation again is safe
     */
    public Outcome apply(Operation op) {
        checkedOnce();
        Outcome outcome;
        try {
            outcome = run(op, plan(op), Optional.empty());
        } catch (CannotApplyException e) {
            refused(e);
            throw e;
        }
        return counted(op, outcome);
    }

    /**
     * Applies every op of {@code ops}, in any order, with the outcome each would have from {@link #apply}
     * in some serial order of the batch (per element or register, the highest seq first): their first
     * writes go to MongoDB as one unordered bulk write (a set element's move and its refresh in place side by
     * side, so that a new element and a re-added one both settle there), and the ops that write did not settle
     * (a document to read, a race lost, a delete) are decided from one read of all their documents, as
     * {@code apply} decides, and written together, round after round. See {@link BatchApply}.
     *
     * <p>One difference in outcome: when the bulk write failed as a whole in a way one op can cause (too
     * large for the driver, a dropped connection), each op is applied again on its own, and one the failed
     * bulk write had already written is reported {@link Outcome#DUPLICATE}. The state is the same.
     *
     * @param ops the operations to apply, of any entities, duplicates allowed
     * @return one result per op, in the order given: an outcome, a refusal, or a failure to apply again
     * @throws IllegalArgumentException if {@code ops} is {@code null}
     * @throws InvalidConfigurationException if the check of the collection made before the first apply finds a
     *                                       problem of set-up (a default collation that is not simple)
     * @throws TransientException if MongoDB cannot answer that check now; nothing was written
     */
    public List<BatchResult> applyAll(List<Operation> ops) {
        return applyAll(ops, op -> false);
    }

    /**
     * {@link #applyAll(List)} with a hint about cost: {@code likelyPresent} picks the add and remove ops
     * whose element is probably stored already, in the array the op writes, with a lower seq (a view
     * feeder knows what it projected from a source's previous version). Their first write is then the
     * in-place refresh alone, instead of the move and the refresh side by side, and no probe beside it (such a
     * caller, the one writer of its view, is rarely overtaken): two statements less in the bulk write. A wrong hint costs a read and a second write, never a wrong state: the refresh is guarded like
     * every other write. Outcomes are {@code apply}'s.
     *
     * @param ops           the operations to apply, of any entities, duplicates allowed
     * @param likelyPresent true for an add or remove whose element is probably stored already; a hint only
     * @return one result per op, in the order given, as {@link #applyAll(List)} returns them
     * @throws IllegalArgumentException if {@code ops} or {@code likelyPresent} is {@code null}
     * @throws InvalidConfigurationException if the check of the collection made before the first apply finds a
     *                                       problem of set-up (a default collation that is not simple)
     * @throws TransientException if MongoDB cannot answer that check now; nothing was written
     */
    public List<BatchResult> applyAll(List<Operation> ops, Predicate<Operation> likelyPresent) {
        if (ops == null || likelyPresent == null) {
            throw new IllegalArgumentException("applyAll: ops and likelyPresent are required");
        }
        checkedOnce();
        return new BatchApply(this, List.copyOf(ops)).apply(likelyPresent);
    }

    void checkedOnce() {
        if (!collectionChecked) {
            checkCollection();
        }
    }

    MongoCollection<BsonDocument> collection() {
        return collection;
    }

    /** The schema's ranked registers, by name: {@link WriterChoice} gives each of their assignments a slot. */
    java.util.Set<String> rankedNames() {
        return rankedNames;
    }

    /** Validates {@code op} and chooses how to write it. */
    WritePlan plan(Operation op) {
        schema.validate(op);
        return planFor(op);
    }

    void refused(CannotApplyException e) {
        refused.get(e.kind()).increment();
    }

    Outcome counted(Operation op, Outcome outcome) {
        outcomes.get(outcome).increment();
        switch (outcome) {
            case SEQ_COLLISION -> log.warn("seq collision on {} '{}' seq {}: a different operation with this seq"
                    + " was applied first and wins; check the stamper ({})", name, op.entity(), op.seq(), op);
            case BEYOND_HORIZON -> log.warn("beyond horizon on {} '{}' seq {}: at or below the compaction floor and"
                    + " its tombstone is gone; the tombstone grace period is shorter than this delivery ({})",
                    name, op.entity(), op.seq(), op);
            default -> log.debug("{} '{}' seq {}: {}", name, op.entity(), op.seq(), outcome);
        }
        return outcome;
    }

    private void checkCollection() {
        CollectionChecks.collation(collection);
        collectionChecked = true;
    }

    private WritePlan planFor(Operation op) {
        if (op instanceof Operation.Add add) {
            return SetPlan.add(add, schema.set(add.field()).orElseThrow());
        }
        if (op instanceof Operation.Remove remove) {
            return SetPlan.remove(remove, schema.set(remove.field()).orElseThrow(), options.clock().instant());
        }
        if (op instanceof Operation.Assign assign) {
            Optional<RankedField> ranked = schema.ranked(assign.field());
            return ranked.isPresent() ? new RankedAssignPlan(assign, ranked.get()) : new AssignPlan(assign);
        }
        if (op instanceof Operation.Increment increment) {
            return new IncrementPlan(increment, options.clock().instant());
        }
        return new DeletePlan((Operation.Delete) op, schema, options.clock().instant());
    }

    /** {@code apply}'s write-read loop; {@code alreadyRead} when a batch sent the first write and read the document. */
    Outcome run(Operation op, WritePlan plan, Optional<Optional<BsonDocument>> alreadyRead) {
        return loop.run(op, plan, alreadyRead);
    }

    /**
     * True if MongoDB accepts a write on this collection now: a guarded update that matches nothing (and
     * writes nothing), sent the way the applier's own writes are. The consumer asks when a message keeps
     * failing and nothing else tells whether MongoDB is serving. A failure that does not show MongoDB down
     * (a connection another operation's fault just dropped, say) is asked again, up to three times.
     * Never throws.
     *
     * @return true if MongoDB accepted the probe; false if a failure showed MongoDB down or was not transient, or
     *         all three attempts failed
     */
    public boolean answersWrites() {
        for (int attempt = 1; attempt <= PROBE_ATTEMPTS; attempt++) {
            try {
                collection.updateOne(Queries.versionIs(PROBE_ID, -1L), inc(StoredFields.VERSION, 0L));
                return true;
            } catch (RuntimeException e) {
                log.debug("write probe {} of {} failed: {}", attempt, name, e.toString());
                if (!(MongoErrors.translate("probe " + name, e) instanceof TransientException t) || t.backendDown()) {
                    return false;
                }
            }
        }
        return false;
    }

    String describe(Operation op) {
        return loop.describe(op);
    }

    WriteLoop loop() {
        return loop;
    }
}
