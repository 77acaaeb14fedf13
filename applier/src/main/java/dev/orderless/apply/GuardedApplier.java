package dev.orderless.apply;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.result.UpdateResult;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import io.micrometer.core.instrument.Counter;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
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
 * </ol>
 * See {@link SetPlan}, {@link AssignPlan} and {@link DeletePlan} for each operation's guard, and
 * {@link StoredFields} for the stored document. Outcomes are returned, never thrown, and counted in
 * {@code orderless.apply.outcomes{collection,outcome}}.
 *
 * <p>Use a collection with write concern majority if the state must survive a primary failover.
 */
public final class GuardedApplier {
    private static final Logger log = LoggerFactory.getLogger(GuardedApplier.class);

    private final MongoCollection<BsonDocument> collection;
    private final CollectionSchema schema;
    private final ApplierOptions options;
    private final String name;
    private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
    private final Counter retries;

    private GuardedApplier(MongoCollection<BsonDocument> collection, CollectionSchema schema, ApplierOptions options) {
        if (collection == null || schema == null || options == null) {
            throw new InvalidConfigurationException("applier: collection, schema and options are all required");
        }
        this.collection = collection;
        this.schema = schema;
        this.options = options;
        this.name = collection.getNamespace().getCollectionName();
        for (Outcome outcome : Outcome.values()) {
            outcomes.put(outcome, Counter.builder("orderless.apply.outcomes")
                    .description("operations applied or found stale, by outcome")
                    .tag("collection", name).tag("outcome", outcome.tag())
                    .register(options.meters()));
        }
        this.retries = Counter.builder("orderless.apply.retries")
                .description("guarded writes that matched nothing and were followed by a read")
                .tag("collection", name).register(options.meters());
    }

    public static GuardedApplier create(MongoCollection<BsonDocument> collection, CollectionSchema schema) {
        return new GuardedApplier(collection, schema, ApplierOptions.ofDefaults());
    }

    public static GuardedApplier create(MongoCollection<BsonDocument> collection, CollectionSchema schema,
                                        ApplierOptions options) {
        return new GuardedApplier(collection, schema, options);
    }

    public CollectionSchema schema() {
        return schema;
    }

    /**
     * Applies {@code op} at most once, whatever has been applied before.
     *
     * @return {@link Outcome#APPLIED} or why not
     * @throws dev.orderless.InvalidInputException if {@code op} names a field the schema does not allow
     * @throws TransientException if MongoDB is unavailable or the document too contended; nothing was
     *                            lost, and applying the same operation again is safe
     */
    public Outcome apply(Operation op) {
        schema.validate(op);
        Outcome outcome = run(op, planFor(op));
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

    private WritePlan planFor(Operation op) {
        if (op instanceof Operation.Add add) {
            return SetPlan.add(add, schema.set(add.field()).orElseThrow());
        }
        if (op instanceof Operation.Remove remove) {
            return SetPlan.remove(remove, schema.set(remove.field()).orElseThrow(), options.clock().instant());
        }
        if (op instanceof Operation.Assign assign) {
            return new AssignPlan(assign);
        }
        return new DeletePlan((Operation.Delete) op, schema, options.clock().instant());
    }

    private Outcome run(Operation op, WritePlan plan) {
        Optional<WritePlan.Write> next = plan.first();
        int attempts = 0;
        while (true) {
            if (next.isPresent()) {
                if (write(op, next.get())) {
                    return Outcome.APPLIED;
                }
                if (++attempts >= options.maxAttempts()) {
                    throw new TransientException("gave up on " + name + " '" + op.entity() + "' seq " + op.seq()
                            + " after " + attempts + " contended writes; it was not applied, retry it");
                }
                retries.increment();
            }
            WritePlan.Step step = plan.afterRead(read(op));
            if (step instanceof WritePlan.Step.Done done) {
                return done.outcome();
            }
            next = Optional.of(((WritePlan.Step.Next) step).write());
        }
    }

    private boolean write(Operation op, WritePlan.Write write) {
        try {
            UpdateResult result = collection.updateOne(write.filter(), write.update(),
                    new UpdateOptions().upsert(write.upsert()));
            return result.getMatchedCount() > 0 || result.getUpsertedId() != null;
        } catch (MongoWriteException e) {
            if (write.upsert() && MongoErrors.isDuplicateKey(e)) {
                return false;
            }
            throw MongoErrors.translate(describe(op), e);
        } catch (MongoException e) {
            throw MongoErrors.translate(describe(op), e);
        }
    }

    private Optional<BsonDocument> read(Operation op) {
        try {
            return Optional.ofNullable(collection.find(eq(StoredFields.ID, op.entity())).first());
        } catch (MongoException e) {
            throw MongoErrors.translate(describe(op), e);
        }
    }

    private String describe(Operation op) {
        return "apply to " + name + " '" + op.entity() + "' seq " + op.seq();
    }
}
