package dev.orderless.oracle;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reference semantics, as plain in-memory code: an entity's state is what applying its operations
 * one at a time, in increasing seq order, each exactly once, gives. No guards are needed because the
 * order is right by construction; the guarded applier must reach the same {@link EntityState} for any
 * delivery order, duplication and concurrency.
 *
 * <p>Operations with the same {@code (entity, seq)} are one operation (the first one given is kept).
 */
public final class ReferenceModel {
    private final CollectionSchema schema;

    /**
     * A model of the collection {@code schema} declares. It keeps no state between calls; each call replays only
     * what it is given.
     *
     * @param schema the schema: which fields are sets (a delete turns their elements into tombstones) and which
     *               registers are ranked
     */
    public ReferenceModel(CollectionSchema schema) {
        this.schema = schema;
    }

    /**
     * The schema whose operations this model applies.
     *
     * @return the schema given to the constructor
     */
    public CollectionSchema schema() {
        return schema;
    }

    /**
     * The state of every entity that {@code ops} touch, by entity.
     *
     * @param ops operations in any order; of several with the same {@code (entity, seq)}, the first is kept
     * @return each entity's state after its operations, once each in seq order, sorted by entity
     */
    public Map<String, EntityState> replay(Collection<? extends Operation> ops) {
        Map<String, Map<Long, Operation>> byEntity = new TreeMap<>();
        for (Operation op : ops) {
            byEntity.computeIfAbsent(op.entity(), e -> new TreeMap<>()).putIfAbsent(op.seq(), op);
        }
        Map<String, EntityState> states = new TreeMap<>();
        byEntity.forEach((entity, history) -> states.put(entity, replayOne(entity, history.values())));
        return states;
    }

    /**
     * The state of {@code from}'s entity after {@code later} too: each op of it applied once, in seq order,
     * over {@code from}. Right when every op of {@code later} has a seq above every seq {@code from} was made
     * of (a history folded up to a seq, then the operations after it).
     *
     * @param from  a state of one entity
     * @param later operations of that entity, in any order; of several with the same seq, the first is kept
     * @return the entity's state after them
     */
    public EntityState continueFrom(EntityState from, Collection<? extends Operation> later) {
        Map<Long, Operation> bySeq = new TreeMap<>();
        later.forEach(op -> bySeq.putIfAbsent(op.seq(), op));
        Entity state = new Entity(from);
        bySeq.values().forEach(state::apply);
        return new EntityState(from.entity(), state.floor, state.live, state.tombstones, state.registers,
                state.counters);
    }

    /**
     * The entities whose stored state differs from the expected one (either side may lack an entity).
     *
     * @param expected states by entity, from {@link #replay}
     * @param stored   states by entity, read from the collection (see {@link EntityState#readAll})
     * @return the ids of the entities not equal on both sides, sorted; empty when the two agree
     */
    public static java.util.Set<String> diverged(Map<String, EntityState> expected, Map<String, EntityState> stored) {
        java.util.Set<String> ids = new java.util.TreeSet<>(expected.keySet());
        ids.addAll(stored.keySet());
        ids.removeIf(id -> java.util.Objects.equals(expected.get(id), stored.get(id)));
        return ids;
    }

    /**
     * How many operations the expected states show an effect of that the stored states lack: what a
     * lost message leaves behind. An operation is witnessed by its seq where its effect survives: the
     * floor a delete set, a live element an add made, a tombstone a remove left, a register an assign set.
     * Operations whose effect a later one overwrote witness nothing, on either side. An increment witnesses
     * nothing either: its effect is part of a sum, and a sum that differs does not say whether an increment is
     * missing or counted twice, so a counter that differs makes its entity diverge ({@link #diverged}) and is not
     * counted here. 0 when the states are equal.
     *
     * @param expected states by entity, from {@link #replay}
     * @param stored   states by entity, read from the collection
     * @return the number of expected seqs the stored states do not show
     */
    public static long missingEffects(Map<String, EntityState> expected, Map<String, EntityState> stored) {
        long missing = 0;
        for (var entry : expected.entrySet()) {
            java.util.Set<Long> there = witnesses(stored.get(entry.getKey()));
            missing += witnesses(entry.getValue()).stream().filter(seq -> !there.contains(seq)).count();
        }
        return missing;
    }

    /**
     * The seqs {@code state} shows: the floor a delete set, every live element's and tombstone's seq, every
     * register's; empty for no state.
     *
     * @param state an entity's state, or {@code null}
     * @return the seqs, a new mutable set
     */
    public static java.util.Set<Long> witnesses(EntityState state) {
        java.util.Set<Long> seqs = new java.util.HashSet<>();
        if (state == null) {
            return seqs;
        }
        if (state.floor() > 0) {
            seqs.add(state.floor());
        }
        state.live().values().forEach(field -> field.values().forEach(element -> seqs.add(element.seq())));
        state.tombstones().values().forEach(field -> seqs.addAll(field.values()));
        state.registers().values().forEach(register -> seqs.add(register.seq()));
        return seqs;
    }

    private EntityState replayOne(String entity, Collection<Operation> history) {
        Entity state = new Entity();
        List<Operation> ordered = new ArrayList<>(history);
        ordered.sort(Comparator.comparingLong(Operation::seq));
        ordered.forEach(state::apply);
        return new EntityState(entity, state.floor, state.live, state.tombstones, state.registers, state.counters);
    }

    private static int rank(dev.orderless.apply.RankedField ranked, org.bson.BsonValue value) {
        return value.isString() ? ranked.rank(value.asString().getValue()).orElse(-1) : -1;
    }

    /** Mutable state of one entity during a replay. */
    private final class Entity {
        long floor;
        final Map<String, Map<String, EntityState.Element>> live = new HashMap<>();
        final Map<String, Map<String, Long>> tombstones = new HashMap<>();
        final Map<String, EntityState.Register> registers = new HashMap<>();
        final Map<String, java.math.BigInteger> counters = new HashMap<>();

        Entity() {
        }

        Entity(EntityState from) {
            floor = from.floor();
            from.live().forEach((field, elements) -> live(field).putAll(elements));
            from.tombstones().forEach((field, removed) -> tombstones(field).putAll(removed));
            registers.putAll(from.registers());
            counters.putAll(from.counters());
        }

        void apply(Operation op) {
            if (op instanceof Operation.Add add) {
                tombstones(add.field()).remove(add.element());
                live(add.field()).put(add.element(), new EntityState.Element(add.seq(), add.attrs()));
            } else if (op instanceof Operation.Remove remove) {
                live(remove.field()).remove(remove.element());
                tombstones(remove.field()).put(remove.element(), remove.seq());
            } else if (op instanceof Operation.Assign assign) {
                EntityState.Register current = registers.get(assign.field());
                // a ranked register keeps the highest-ranked value, ties to the later (this one, in seq order)
                if (current == null || schema.ranked(assign.field()).map(ranked -> rank(ranked, assign.value())
                        >= rank(ranked, current.value())).orElse(true)) {
                    registers.put(assign.field(), new EntityState.Register(assign.seq(), assign.value()));
                }
            } else if (op instanceof Operation.Increment increment) {
                // the exact sum, as the applier keeps it: never wrapped, whatever the order
                counters.merge(increment.field(), java.math.BigInteger.valueOf(increment.delta()),
                        java.math.BigInteger::add);
            } else {
                floor = op.seq();
                schema.sets().forEach(set -> {
                    live(set.field()).keySet().forEach(element -> tombstones(set.field()).put(element, floor));
                    live(set.field()).clear();
                });
                registers.clear();
                counters.clear();
            }
        }

        private Map<String, EntityState.Element> live(String field) {
            return live.computeIfAbsent(field, f -> new HashMap<>());
        }

        private Map<String, Long> tombstones(String field) {
            return tombstones.computeIfAbsent(field, f -> new HashMap<>());
        }
    }
}
