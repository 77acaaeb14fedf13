package dev.orderless.testing.chaos;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import dev.orderless.oracle.ReferenceModel;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.bson.BsonDocument;

/**
 * A chaos run for a team's own collection, in one call: its operations published shuffled with duplicates to a
 * real broker, applied by competing consumers of its own while faults are injected, and every document compared
 * with the reference model. Immutable: each {@code withX} returns a copy.
 *
 * <pre>
 * ChaosResult result = ChaosRun.of(ORDERS)
 *         .withOperations(new OrdersGenerator(), 2000)
 *         .withDuplicates(0.3)
 *         .withConsumers(4, ConsumerFactory.standard(ORDERS))
 *         .withFaults(Fault.KILL_CONSUMER)
 *         .run(mongo.connectionString(), rabbit.uri());
 * result.print(System.out);
 * </pre>
 *
 * <ol>
 *   <li>The operations: the generator's (drawn from the seed) or the recorded history; each published once and, with
 *       the duplicate share, once more; all in an order shuffled by the seed, each confirmed by the broker, to a
 *       queue of the run's own (its dead-letter queue beside it), for a collection in a database of its own.
 *   <li>The consumers, each started by the team's {@link ConsumerFactory} behind proxies of its own.
 *   <li>The faults, each once: a consumer killed when a quarter of the messages were taken (a new one started),
 *       the broker connections cut for two seconds at half, the MongoDB connections at three quarters.
 *   <li>Drained: once the queue is empty and the documents equal the expected states (or stopped changing for
 *       a second), the consumers are closed (what they held finishes or goes back), and started again while
 *       anything went back; bounded (two minutes a round, three rounds).
 *   <li>Compared: every document with the reference model's state of the operations; what diverged is shrunk
 *       ({@link Counterexample}) unless {@link #withoutShrinking()}. With a view ({@link #withView}), fed from the
 *       start by a feeder of the run's own, every view document with the projection of the final documents.
 * </ol>
 */
public final class ChaosRun {
    private static final Duration DRAIN = Duration.ofMinutes(2);
    private static final Duration CUT = Duration.ofSeconds(2);
    private static final Duration QUIET = Duration.ofSeconds(1);

    private final CollectionSchema schema;
    private final String name;
    private final String collection;
    private final Optional<OperationGenerator> generator;
    private final int count;
    private final List<Operation> history;
    private final double duplicates;
    private final int consumers;
    private final ConsumerFactory factory;
    private final int threads;
    private final Set<Fault> faults;
    private final long seed;
    private final boolean shrinking;
    private final Function<Operation, byte[]> encoder;
    private final Function<byte[], Operation> decoder;
    private final Optional<ChaosView> view;

    private ChaosRun(CollectionSchema schema, String name, String collection, Optional<OperationGenerator> generator,
                     int count, List<Operation> history, double duplicates, int consumers, ConsumerFactory factory,
                     int threads, Set<Fault> faults, long seed, boolean shrinking, Function<Operation, byte[]> encoder,
                     Function<byte[], Operation> decoder, Optional<ChaosView> view) {
        this.schema = schema;
        this.name = name;
        this.collection = collection;
        this.generator = generator;
        this.count = count;
        this.history = List.copyOf(history);
        this.duplicates = duplicates;
        this.consumers = consumers;
        this.factory = factory;
        this.threads = threads;
        this.faults = faults.isEmpty() ? EnumSet.noneOf(Fault.class) : EnumSet.copyOf(faults);
        this.seed = seed;
        this.shrinking = shrinking;
        this.encoder = encoder;
        this.decoder = decoder;
        this.view = view;
    }

    /**
     * A run for a collection of {@code schema}: by default two consumers of {@link ConsumerFactory#standard} with
     * two threads each, no duplicates, no faults, the canonical envelope, a seed from {@code -Dorderless.seed} or
     * the clock; operations are required ({@link #withOperations} or {@link #withHistory}).
     */
    public static ChaosRun of(CollectionSchema schema) {
        if (schema == null) {
            throw new InvalidConfigurationException("chaos run: schema is required");
        }
        Envelope envelope = Envelope.ofDefaults();
        return new ChaosRun(schema, "chaos", "chaos", Optional.empty(), 0, List.of(), 0, 2,
                ConsumerFactory.standard(schema), 2, Set.of(), Long.getLong("orderless.seed", System.nanoTime()),
                true, envelope::encode, envelope::decode, Optional.empty());
    }

    /** The name its row shows. */
    public ChaosRun withName(String name) {
        require(name != null && !name.isBlank(), "name must not be blank");
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /** The collection the consumers apply to (in the run's own database); "chaos" by default. */
    public ChaosRun withCollection(String collection) {
        require(collection != null && !collection.isBlank(), "collection must not be blank");
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /** {@code count} operations from {@code generator}, drawn from the seed. */
    public ChaosRun withOperations(OperationGenerator generator, int count) {
        require(generator != null && count > 0, "operations: a generator and a count above 0");
        return new ChaosRun(schema, name, collection, Optional.of(generator), count, List.of(), duplicates, consumers,
                factory, threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /** A recorded history ({@link Envelopes#read}, the version history), instead of a generator. */
    public ChaosRun withHistory(List<Operation> history) {
        require(history != null && !history.isEmpty(), "history must hold at least one operation");
        return new ChaosRun(schema, name, collection, Optional.empty(), 0, history, duplicates, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /** The share of operations published twice, 0 to 1. */
    public ChaosRun withDuplicates(double share) {
        require(share >= 0 && share <= 1, "duplicates: a share from 0 to 1, was " + share);
        return new ChaosRun(schema, name, collection, generator, count, history, share, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /** {@code count} competing consumers, each started by {@code factory}. */
    public ChaosRun withConsumers(int count, ConsumerFactory factory) {
        require(count > 0 && factory != null, "consumers: a count above 0 and a factory");
        return new ChaosRun(schema, name, collection, generator, this.count, history, duplicates, count, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /** The threads each consumer is asked for ({@link ChaosContext#concurrency()}); 2 by default. */
    public ChaosRun withThreads(int threads) {
        require(threads > 0, "threads must be above 0, was " + threads);
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /** The faults to inject, each once. */
    public ChaosRun withFaults(Fault... faults) {
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, Set.of(faults), seed, shrinking, encoder, decoder, view);
    }

    /** The seed: the same seed publishes the same history in the same order. */
    public ChaosRun withSeed(long seed) {
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /**
     * How each operation becomes a message body and back, as the team's producer and consumer do it; the canonical
     * envelope by default, which carries every value with its BSON type. The run refuses to start, naming the
     * operation, where the codec reads an operation back otherwise than it was made: the consumers would store what
     * it reads, and the reference model compares with the operations as made.
     */
    public ChaosRun withCodec(Function<Operation, byte[]> encoder, Function<byte[], Operation> decoder) {
        require(encoder != null && decoder != null, "codec: an encoder and a decoder");
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, view);
    }

    /**
     * A view the run keeps with a feeder of its own and checks at the end against the projection of the final
     * documents ({@link ChaosView}); none by default.
     */
    public ChaosRun withView(ChaosView view) {
        require(view != null, "view is required");
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, faults, seed, shrinking, encoder, decoder, Optional.of(view));
    }

    /** No shrinking when documents diverge (the run ends at the comparison). */
    public ChaosRun withoutShrinking() {
        return new ChaosRun(schema, name, collection, generator, count, history, duplicates, consumers, factory,
                threads, faults, seed, false, encoder, decoder, view);
    }

    /**
     * Runs it against the MongoDB of {@code mongoConnectionString} and the broker of {@code rabbitUri} (each in a
     * database and queues of the run's own, dropped and deleted after).
     */
    public ChaosResult run(String mongoConnectionString, URI rabbitUri) {
        require(generator.isPresent() || !history.isEmpty(), "operations are required: withOperations(generator,"
                + " count) or withHistory(operations)");
        long started = System.nanoTime();
        Drawn drawn = drawn();
        List<Operation> ops = drawn.operations();
        List<Operation> delivery = drawn.delivery();
        Random random = drawn.random();
        try (Rig rig = new Rig(mongoConnectionString, rabbitUri, collection)) {
            Optional<ViewCheck> viewCheck = view.map(v -> new ViewCheck(rig, collection, v));
            rig.publish(rig.queue, delivery.stream().map(encoder).toList());
            List<Rig.Slot> slots = new ArrayList<>();
            for (int i = 0; i < consumers; i++) {
                slots.add(rig.start(factory, rig.queue, threads));
            }
            List<String> injected = inject(rig, slots, delivery.size());
            Map<String, EntityState> expected = new ReferenceModel(schema).replay(ops);
            long left = drain(rig, slots, expected);
            Map<String, EntityState> stored = stored(rig);
            List<String> diverged = new ArrayList<>(ReferenceModel.diverged(expected, stored));
            long lost = ReferenceModel.missingEffects(expected, stored) + left;
            long deadLettered = rig.ready(rig.queue + ".dlq");
            Optional<Counterexample> counterexample = Optional.empty();
            List<String> notReproduced = new ArrayList<>();
            if (!diverged.isEmpty() && shrinking) {
                Shrinker shrinker = new Shrinker(rig, schema, factory, encoder);
                // the first of up to three diverged entities whose divergence shows one message at a time
                for (String entity : diverged.subList(0, Math.min(3, diverged.size()))) {
                    counterexample = shrinker.shrink(entity,
                            delivery.stream().filter(op -> op.entity().equals(entity)).toList(), random);
                    if (counterexample.isPresent()) {
                        break;
                    }
                    notReproduced.add(entity);
                }
                shrinker.close();
            }
            Optional<Long> viewDiverged = viewCheck.map(ViewCheck::diverged);
            return new ChaosResult(name, ops.size(), delivery.size(), injected, diverged.size(), lost, deadLettered,
                    (System.nanoTime() - started) / 1e9, seed, counterexample, notReproduced,
                    diverged.subList(0, Math.min(10, diverged.size())), viewDiverged);
        }
    }

    /** What the seed draws: the operations, the order they are published in, and the draws left for shrinking. */
    record Drawn(List<Operation> operations, List<Operation> delivery, Random random) {
    }

    /**
     * The operations and their delivery, drawn from the seed.
     *
     * @throws dev.orderless.InvalidInputException if one is bad input for the schema, or the codec does not carry it
     *                                             as it is
     */
    Drawn drawn() {
        Random random = new Random(seed);
        List<Operation> ops = generator.map(g -> g.generate(random, count)).orElse(history);
        ops.forEach(schema::validate);   // bad input in the generator or the file is named now, not dead-lettered
        ops.forEach(this::carriedAsItIs);
        Map<String, Operation> seen = new java.util.HashMap<>();
        for (Operation op : ops) {
            Operation first = seen.putIfAbsent(op.entity() + '\u0000' + op.seq(), op);
            if (first != null && !first.equals(op)) {
                throw new dev.orderless.InvalidInputException("seq collision in the operations: '" + op.entity()
                        + "' seq " + op.seq() + " is both " + first + " and " + op + "; (entity, seq) names one"
                        + " operation: a stamper that reuses seqs breaks convergence before any consumer does");
            }
        }
        return new Drawn(ops, delivery(ops, random), random);
    }

    /** {@code op} read back from its message as it was made, or refused naming what the codec changed. */
    private void carriedAsItIs(Operation op) {
        Operation read = decoder.apply(encoder.apply(op));
        if (!read.equals(op)) {
            throw new dev.orderless.InvalidInputException("the codec does not carry '" + op.entity() + "' seq "
                    + op.seq() + " as it is: made " + op + ", read back " + read + "; the consumers would store what"
                    + " it reads (the canonical envelope carries every value with its BSON type)");
        }
    }

    /** Each operation once and, with the duplicate share, once more; shuffled. */
    private List<Operation> delivery(List<Operation> ops, Random random) {
        List<Operation> delivery = new ArrayList<>(ops);
        for (Operation op : ops) {
            if (random.nextDouble() < duplicates) {
                delivery.add(op);
            }
        }
        Collections.shuffle(delivery, random);
        return delivery;
    }

    /** Each fault once, at its share of the messages taken; what was injected, as the row names it. */
    private List<String> inject(Rig rig, List<Rig.Slot> slots, int messages) {
        List<String> injected = new ArrayList<>();
        Map<Fault, Double> at = new LinkedHashMap<>();
        at.put(Fault.KILL_CONSUMER, 0.25);
        at.put(Fault.CUT_BROKER, 0.5);
        at.put(Fault.CUT_MONGO, 0.75);
        for (Map.Entry<Fault, Double> fault : at.entrySet()) {
            if (!faults.contains(fault.getKey())) {
                continue;
            }
            long untilLeft = (long) (messages * (1 - fault.getValue()));
            if (!Poll.until(() -> rig.ready(rig.queue) <= untilLeft, DRAIN, Duration.ofMillis(20))) {
                injected.add(fault.getKey().described() + " (late: the consumers were stuck)");
            }
            switch (fault.getKey()) {
                case KILL_CONSUMER -> {
                    slots.remove(0).kill();
                    slots.add(rig.start(factory, rig.queue, threads));
                }
                case CUT_BROKER -> cut(slots, Rig.Slot::cutBroker);
                case CUT_MONGO -> cut(slots, Rig.Slot::cutMongo);
            }
            injected.add(fault.getKey().described());
        }
        return injected;
    }

    private static void cut(List<Rig.Slot> slots, java.util.function.Consumer<Rig.Slot> how) {
        slots.forEach(how);
        java.util.concurrent.locks.LockSupport.parkNanos(CUT.toNanos());   // how long the fault lasts, not a wait
        slots.forEach(Rig.Slot::restore);
    }

    /**
     * Until nothing is left in the queue with every consumer closed (bounded); what is left. Each round waits until
     * the consumers settled ({@link #settled}), then closes them (what they held finishes, or goes back to the queue),
     * and starts them again while anything went back.
     */
    private long drain(Rig rig, List<Rig.Slot> slots, Map<String, EntityState> expected) {
        for (int round = 0; round < 3; round++) {
            settled(rig, expected);
            slots.forEach(Rig.Slot::close);
            slots.clear();
            if (rig.ready(rig.queue) == 0 || round == 2) {
                break;
            }
            for (int i = 0; i < consumers; i++) {
                slots.add(rig.start(factory, rig.queue, threads));
            }
        }
        return rig.ready(rig.queue);
    }

    /**
     * Waits until the queue is empty and the documents equal the expected states, or, with the queue empty, stopped
     * changing for {@link #QUIET} (a consumer that diverges, or drops messages); bounded by {@link #DRAIN}. The queue's
     * count leaves out the messages consumers hold: the documents say when those were applied.
     */
    private void settled(Rig rig, Map<String, EntityState> expected) {
        long deadline = System.nanoTime() + DRAIN.toNanos();
        int last = 0;
        long since = System.nanoTime();
        while (System.nanoTime() - deadline < 0) {
            boolean empty = rig.ready(rig.queue) == 0;
            List<BsonDocument> docs = new ArrayList<>();
            rig.database.getCollection(collection, BsonDocument.class).find().into(docs);
            if (empty && stored(docs).equals(expected)) {
                return;
            }
            int now = docs.hashCode();
            if (now != last) {
                last = now;
                since = System.nanoTime();
            } else if (empty && System.nanoTime() - since > QUIET.toNanos()) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private Map<String, EntityState> stored(Rig rig) {
        return stored(rig.database.getCollection(collection, BsonDocument.class).find());
    }

    /** Every document's state; one orderless cannot read differs from every state (it counts as diverged). */
    private Map<String, EntityState> stored(Iterable<BsonDocument> docs) {
        Map<String, EntityState> stored = new TreeMap<>();
        for (BsonDocument doc : docs) {
            String id = doc.get("_id") != null && doc.get("_id").isString() ? doc.getString("_id").getValue()
                    : String.valueOf(doc.get("_id"));
            try {
                stored.put(id, EntityState.of(doc, schema));
            } catch (RuntimeException unreadable) {
                stored.put(id, new EntityState(id + " (unreadable: " + unreadable.getMessage() + ")", -1, Map.of(),
                        Map.of(), Map.of()));
            }
        }
        return stored;
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new InvalidConfigurationException("chaos run: " + what);
        }
    }
}
