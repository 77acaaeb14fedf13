package dev.orderless.testing.chaos;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.ReferenceModel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;
import org.bson.BsonDocument;

/**
 * Shrinks a divergence to the smallest breaking history, as property-testing libraries do. Each candidate is a
 * trial: its messages, under an entity id of the trial's own, published in order to a queue of their own and
 * applied one at a time by one consumer of the team's (concurrency 1), then a sentinel message (the first one again,
 * under another id) whose document says the consumer got through them (where it drops that kind of message: the
 * queue empty and the entity's document unchanged for a second); it breaks if the entity's document then differs
 * from the reference model's state. The answer is run once more (up to three times), and given only if it breaks again.
 *
 * <ol>
 *   <li>Find a breaking order: the entity's messages as they were published, else up to ten shuffles of them.
 *   <li>Minimize it ({@link Minimizer}): fewer messages, then a delivery order closer to seq order.
 * </ol>
 * Bounded: at most {@link #MAX_TRIALS} trials in the minimizing; the smallest found so far is the answer.
 */
final class Shrinker implements AutoCloseable {
    static final int MAX_TRIALS = 200;
    private static final Duration SENTINEL_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration TRIAL_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration QUIET = Duration.ofSeconds(1);

    private final Rig rig;
    private final ReferenceModel model;
    private final CollectionSchema schema;
    private final Function<Operation, byte[]> encoder;
    private final String queue;
    private final Rig.Slot consumer;
    private int trials;
    private Optional<BsonDocument> lastStored = Optional.empty();
    private Optional<Operation> landed = Optional.empty();   // a message the consumer applied as a sentinel
    private final java.util.Set<Class<?>> dropped = new java.util.HashSet<>();   // kinds it did not

    Shrinker(Rig rig, CollectionSchema schema, ConsumerFactory factory, Function<Operation, byte[]> encoder) {
        this.rig = rig;
        this.schema = schema;
        this.model = new ReferenceModel(schema);
        this.encoder = encoder;
        this.queue = rig.declare(rig.queue + ".shrink");
        this.consumer = rig.start(factory, queue, 1);
    }

    /** Stops its consumer. */
    @Override
    public void close() {
        consumer.close();
    }

    /** The smallest breaking history of {@code entity}'s {@code delivered} messages, if one breaks one at a time. */
    Optional<Counterexample> shrink(String entity, List<Operation> delivered, Random random) {
        List<Operation> breaking = null;
        if (breaks(delivered)) {
            breaking = delivered;
        }
        for (int shuffle = 0; breaking == null && shuffle < 10; shuffle++) {
            List<Operation> shuffled = new ArrayList<>(delivered);
            Collections.shuffle(shuffled, random);
            if (breaks(shuffled)) {
                breaking = shuffled;
            }
        }
        if (breaking == null) {
            return Optional.empty();   // it broke under concurrency only
        }
        Minimizer minimizer = new Minimizer(this::breaks, MAX_TRIALS);
        breaking = minimizer.minimize(breaking);
        boolean again = false;   // once more, for the stored document of the answer: it must break again
        for (int attempt = 0; attempt < 3 && !again; attempt++) {
            again = breaks(breaking);
        }
        if (!again) {
            return Optional.empty();
        }
        List<String> envelopes = breaking.stream().map(op -> Rig.text(encoder.apply(op))).toList();
        return Optional.of(new Counterexample(breaking, envelopes, expected(breaking, entity), lastStored,
                lastStored.flatMap(this::readable), delivered.size(), minimizer.trials()));
    }

    /** One trial: true if the entity's document then differs from the reference model's state. */
    private boolean breaks(List<Operation> delivery) {
        trials++;
        String entity = "t" + trials + "~" + delivery.get(0).entity();
        String done = "t" + trials + "~done";
        List<byte[]> bodies = new ArrayList<>();
        List<Operation> renamed = new ArrayList<>();
        for (Operation op : delivery) {
            renamed.add(renamed(op, entity));
            bodies.add(encoder.apply(renamed.get(renamed.size() - 1)));
        }
        Operation sentinel = sentinel(delivery);
        bodies.add(encoder.apply(renamed(sentinel, done)));
        rig.publish(queue, bodies);
        if (Poll.until(() -> document(done).isPresent(), SENTINEL_TIMEOUT, Duration.ofMillis(10))) {
            landed = Optional.of(sentinel);
        } else {
            dropped.add(sentinel.getClass());
            if (!quiet(entity)) {
                return false;   // not got through: not a divergence this trial can show
            }
        }
        lastStored = document(entity);
        EntityState expected = model.replay(renamed).get(entity);
        if (lastStored.isEmpty()) {
            return expected != null;
        }
        Optional<EntityState> got = readable(lastStored.get());
        return got.isEmpty() || !got.get().equals(expected);   // one orderless cannot read differs from every state
    }

    /** {@code doc} as orderless reads it; empty if it cannot. */
    private Optional<EntityState> readable(BsonDocument doc) {
        try {
            return Optional.of(EntityState.of(doc, schema));
        } catch (RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    /**
     * The sentinel: a message the consumer applied as a sentinel before (on an entity of its own, any message will
     * do), else one of this delivery of a kind it has not dropped, else its first.
     */
    private Operation sentinel(List<Operation> delivery) {
        return landed.or(() -> delivery.stream().filter(op -> !dropped.contains(op.getClass())).findFirst())
                .orElse(delivery.get(0));
    }

    /**
     * For a consumer that dropped the sentinel (it drops that kind of message): true once the trial's queue is
     * empty and its entity's document stayed the same for {@link #QUIET}; false if not within the trial's bound.
     */
    private boolean quiet(String entity) {
        long deadline = System.nanoTime() + TRIAL_TIMEOUT.toNanos();
        Optional<BsonDocument> last = document(entity);
        long since = System.nanoTime();
        while (System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            Optional<BsonDocument> now = document(entity);
            if (!now.equals(last)) {
                last = now;
                since = System.nanoTime();
            } else if (rig.ready(queue) == 0 && System.nanoTime() - since > QUIET.toNanos()) {
                return true;
            }
        }
        return false;
    }

    private Optional<BsonDocument> document(String id) {
        return Optional.ofNullable(rig.database.getCollection(rig.collection, BsonDocument.class)
                .find(com.mongodb.client.model.Filters.eq("_id", id)).first());
    }

    private EntityState expected(List<Operation> delivery, String entity) {
        return model.replay(delivery).getOrDefault(entity, new EntityState(entity, 0, java.util.Map.of(),
                java.util.Map.of(), java.util.Map.of()));
    }

    /** {@code op} on {@code entity} instead of its own. */
    static Operation renamed(Operation op, String entity) {
        if (op instanceof Operation.Add add) {
            return Operation.add(entity, add.seq(), add.field(), add.element(), add.attrs());
        }
        if (op instanceof Operation.Remove remove) {
            return Operation.remove(entity, remove.seq(), remove.field(), remove.element());
        }
        if (op instanceof Operation.Assign assign) {
            return Operation.assign(entity, assign.seq(), assign.field(), assign.value());
        }
        if (op instanceof Operation.Increment increment) {
            return Operation.increment(entity, increment.seq(), increment.field(), increment.delta());
        }
        return Operation.delete(entity, op.seq());
    }
}
