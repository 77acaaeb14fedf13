package dev.orderless.oracle;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * Random operation histories over few entities, fields and elements, so that operations collide on the
 * same element often. A history lists operations in true (seq) order; a delivery is any shuffle of it,
 * with or without duplicates.
 */
public final class Histories {
    /** The ranked register's values, lowest first. */
    private static final String[] STAGES = {"applied", "enrolled", "graduated", "withdrawn"};

    public static final CollectionSchema SCHEMA = CollectionSchema.builder()
            .set(SetField.of("classes", "name"))
            .set(SetField.of("clubs", "name"))
            .register("name")
            .register("city")
            .build();

    /** {@link #SCHEMA} with two counters and a ranked register, for {@link #stepsOfAllTypes}. */
    public static final CollectionSchema ALL_TYPES = CollectionSchema.builder()
            .set(SetField.of("classes", "name"))
            .set(SetField.of("clubs", "name"))
            .register("name")
            .register("city")
            .counter("credits")
            .counter("points")
            .ranked("stage", STAGES)
            .build();

    private static final String[] SETS = {"classes", "clubs"};
    private static final String[] REGISTERS = {"name", "city"};
    private static final String[] COUNTERS = {"credits", "points"};
    private static final String[] ELEMENTS = {"a", "b", "c"};

    private Histories() {
    }

    /** One step, before it is bound to an entity prefix and a seq. */
    public record Step(int kind, int entity, int field, int element, int variant) {
        public Operation toOperation(String prefix, long seq) {
            String id = prefix + "e" + entity;
            if (kind >= 12) {   // only from stepsOfAllTypes
                return Operation.assign(id, seq, "stage", new BsonString(STAGES[variant % STAGES.length]));
            }
            if (kind >= 10) {   // only from stepsOfAllTypes
                return Operation.increment(id, seq, COUNTERS[field % COUNTERS.length], variant - 2L);   // -2..3
            }
            String set = SETS[field % SETS.length];
            String element = ELEMENTS[this.element % ELEMENTS.length];
            if (kind < 4) {
                BsonDocument attrs = variant % 3 == 0 ? new BsonDocument()
                        : new BsonDocument("title", new BsonString("t" + variant));
                return Operation.add(id, seq, set, element, attrs);
            }
            if (kind < 7) {
                return Operation.remove(id, seq, set, element);
            }
            if (kind < 9) {
                return Operation.assign(id, seq, REGISTERS[field % REGISTERS.length], new BsonString("v" + variant));
            }
            return Operation.delete(id, seq);
        }
    }

    /** A history of {@code min..max} steps over {@code entities} entities. */
    public static List<Step> steps(Random random, int min, int max, int entities) {
        return steps(random, min, max, entities, 10);
    }

    /**
     * A history of {@code min..max} steps over {@code entities} entities, a seventh of them increments of the
     * counters of {@link #ALL_TYPES} (deltas -2..3) and a seventh assignments of its ranked register: the same mix
     * otherwise.
     */
    public static List<Step> stepsOfAllTypes(Random random, int min, int max, int entities) {
        return steps(random, min, max, entities, 14);
    }

    private static List<Step> steps(Random random, int min, int max, int entities, int kinds) {
        int size = min + random.nextInt(max - min + 1);
        List<Step> steps = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            steps.add(new Step(random.nextInt(kinds), random.nextInt(entities), random.nextInt(2),
                    random.nextInt(ELEMENTS.length), random.nextInt(6)));
        }
        return steps;
    }

    /** Binds steps to operations: the i-th step gets seq {@code 10 * (i + 1)}, its entity ids {@code prefix}. */
    public static List<Operation> operations(List<Step> steps, String prefix) {
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            ops.add(steps.get(i).toOperation(prefix, 10L * (i + 1)));
        }
        return ops;
    }

    /** A delivery: the history, {@code duplicateShare} of it again, all shuffled. */
    public static List<Operation> delivery(List<Operation> history, double duplicateShare, Random random) {
        List<Operation> delivered = new ArrayList<>(history);
        for (Operation op : history) {
            if (random.nextDouble() < duplicateShare) {
                delivered.add(op);
            }
        }
        java.util.Collections.shuffle(delivered, random);
        return delivered;
    }

    /** Every order of {@code items}. */
    public static <T> List<List<T>> permutations(List<T> items) {
        List<List<T>> result = new ArrayList<>();
        permute(new ArrayList<>(items), 0, result);
        return result;
    }

    private static <T> void permute(List<T> items, int k, List<List<T>> out) {
        if (k == items.size()) {
            out.add(new ArrayList<>(items));
            return;
        }
        for (int i = k; i < items.size(); i++) {
            java.util.Collections.swap(items, k, i);
            permute(items, k + 1, out);
            java.util.Collections.swap(items, k, i);
        }
    }
}
