package dev.orderless.apply;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.UnknownFieldException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonValue;

/**
 * The fields an entity collection may hold, declared up front. Only declared fields are ever turned
 * into update paths: an operation naming anything else is rejected as bad input before MongoDB sees it.
 *
 * <pre>
 * CollectionSchema students = CollectionSchema.builder()
 *         .set(SetField.of("classes", "name"))   // classes + deleted_classes, element key "name"
 *         .register("name")
 *         .counter("credits")                     // a sum of increments, read as a plain number
 *         .build();
 * </pre>
 *
 * @param sets      set fields (live array, tombstone array, element key)
 * @param registers register fields (last-writer-wins values)
 * @param counters  counter fields (sums of increments)
 * @param ranked    ranked registers (the highest-ranked value wins)
 */
public record CollectionSchema(List<SetField> sets, List<String> registers, List<String> counters,
                               List<RankedField> ranked) {
    /**
     * Checks the declarations and keeps unmodifiable copies of the lists.
     *
     * @param sets      set fields (live array, tombstone array, element key)
     * @param registers register fields (last-writer-wins values)
     * @param counters  counter fields (sums of increments)
     * @param ranked    ranked registers (the highest-ranked value wins)
     * @throws InvalidConfigurationException if a list is {@code null}, all four are empty, a register or counter
     *                                       name cannot be a stored field name, or one name is declared twice
     *                                       (a tombstone array included)
     */
    public CollectionSchema {
        if (sets == null || registers == null || counters == null || ranked == null) {
            throw new InvalidConfigurationException("schema: sets, registers, counters and ranked registers must not be"
                    + " null (use an empty list)");
        }
        sets = List.copyOf(sets);
        registers = List.copyOf(registers);
        counters = List.copyOf(counters);
        ranked = List.copyOf(ranked);
        if (sets.isEmpty() && registers.isEmpty() && counters.isEmpty() && ranked.isEmpty()) {
            throw new InvalidConfigurationException("schema: declare at least one set field, register, counter or ranked"
                    + " register");
        }
        Set<String> seen = new HashSet<>();
        for (SetField set : sets) {
            claim(seen, set.field());
            claim(seen, set.tombstones());
        }
        for (String register : registers) {
            Names.problemWithFieldName(register).ifPresent(p -> {
                throw new InvalidConfigurationException("schema: register: " + p);
            });
            claim(seen, register);
        }
        for (String counter : counters) {
            Names.problemWithFieldName(counter).ifPresent(p -> {
                throw new InvalidConfigurationException("schema: counter: " + p);
            });
            claim(seen, counter);
        }
        for (RankedField field : ranked) {
            claim(seen, field.field());
        }
    }

    /**
     * A schema of sets, registers and counters, without ranked registers.
     *
     * @param sets      set fields (live array, tombstone array, element key)
     * @param registers register fields (last-writer-wins values)
     * @param counters  counter fields (sums of increments)
     * @throws InvalidConfigurationException as the canonical constructor does
     */
    public CollectionSchema(List<SetField> sets, List<String> registers, List<String> counters) {
        this(sets, registers, counters, List.of());
    }

    /**
     * A schema of sets and registers, without counters.
     *
     * @param sets      set fields (live array, tombstone array, element key)
     * @param registers register fields (last-writer-wins values)
     * @throws InvalidConfigurationException as the canonical constructor does
     */
    public CollectionSchema(List<SetField> sets, List<String> registers) {
        this(sets, registers, List.of(), List.of());
    }

    private static void claim(Set<String> seen, String name) {
        if (!seen.add(name)) {
            throw new InvalidConfigurationException("schema: field '" + name + "' is declared twice");
        }
    }

    /**
     * A builder with nothing declared yet.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The set field whose live array is {@code field}.
     *
     * @param field a field name
     * @return the set field, or empty if {@code field} is not the live array of a declared set (a tombstone array
     *         is not)
     */
    public Optional<SetField> set(String field) {
        return sets.stream().filter(s -> s.field().equals(field)).findFirst();
    }

    /**
     * Whether {@code field} is declared as a plain register.
     *
     * @param field a field name
     * @return true if it is one of {@link #registers()}; false for a ranked register
     */
    public boolean hasRegister(String field) {
        return registers.contains(field);
    }

    /**
     * The ranked register {@code field}, if it is one.
     *
     * @param field a field name
     * @return its declaration, or empty if {@code field} is not a declared ranked register
     */
    public Optional<RankedField> ranked(String field) {
        return ranked.stream().filter(r -> r.field().equals(field)).findFirst();
    }

    /**
     * Whether {@code field} is declared as a counter.
     *
     * @param field a field name
     * @return true if it is one of {@link #counters()}
     */
    public boolean hasCounter(String field) {
        return counters.contains(field);
    }

    /**
     * Checks that {@code op} touches only declared fields and that its attributes are storable.
     *
     * @param op the operation to check; a delete names no field and always passes
     * @throws InvalidInputException naming the field and what is wrong with it; an {@link UnknownFieldException}
     *                               if the field is simply not declared
     */
    public void validate(Operation op) {
        if (op instanceof Operation.Add add) {
            validateAttrs(requireSet(add.entity(), add.seq(), add.field()), add);
        } else if (op instanceof Operation.Remove remove) {
            requireSet(remove.entity(), remove.seq(), remove.field());
        } else if (op instanceof Operation.Increment increment) {
            requireCounter(increment);
        } else if (op instanceof Operation.Assign assign) {
            requireRegister(assign);
            StorableValues.problem(assign.value()).ifPresent(p -> {
                throw invalid(assign.entity(), assign.seq(), "value of '" + assign.field() + "': " + p);
            });
        }
        // a delete touches the whole entity, no field
    }

    private SetField requireSet(String entity, long seq, String field) {
        forbidden(field).ifPresent(p -> {
            throw invalid(entity, seq, "field " + p);
        });
        if (hasRegister(field)) {
            throw invalid(entity, seq, "field '" + field + "' is a register, not a set: use assign");
        }
        if (hasCounter(field)) {
            throw invalid(entity, seq, "field '" + field + "' is a counter, not a set: use increment");
        }
        if (ranked(field).isPresent()) {
            throw invalid(entity, seq, "field '" + field + "' is a ranked register, not a set: use assign");
        }
        return set(field).orElseThrow(() -> unknown(entity, seq, "field '" + field + "' is not a declared set field"
                + " (declared: " + setNames() + ")"));
    }

    private void requireRegister(Operation.Assign assign) {
        String field = assign.field();
        forbidden(field).ifPresent(p -> {
            throw invalid(assign.entity(), assign.seq(), "field " + p);
        });
        Optional<RankedField> rankedField = ranked(field);
        if (rankedField.isPresent()) {
            BsonValue value = assign.value();
            if (!value.isString() || rankedField.get().rank(value.asString().getValue()).isEmpty()) {
                throw invalid(assign.entity(), assign.seq(), "value of ranked register '" + field + "' must be one of "
                        + rankedField.get().order() + ", was " + StorableValues.brief(value));
            }
            return;
        }
        if (!hasRegister(field)) {
            if (hasCounter(field)) {
                throw invalid(assign.entity(), assign.seq(), "field '" + field + "' is a counter, not a register: use"
                        + " increment");
            }
            if (set(field).isPresent()) {
                throw invalid(assign.entity(), assign.seq(), "field '" + field + "' is a set, not a register: use add"
                        + " or remove");
            }
            throw unknown(assign.entity(), assign.seq(), "field '" + field + "' is not a declared register (declared: "
                    + registerNames() + ")");
        }
    }

    private void requireCounter(Operation.Increment increment) {
        String field = increment.field();
        forbidden(field).ifPresent(p -> {
            throw invalid(increment.entity(), increment.seq(), "field " + p);
        });
        if (!hasCounter(field)) {
            if (hasRegister(field) || ranked(field).isPresent()) {
                throw invalid(increment.entity(), increment.seq(), "field '" + field + "' is a register, not a counter:"
                        + " use assign");
            }
            if (set(field).isPresent()) {
                throw invalid(increment.entity(), increment.seq(), "field '" + field + "' is a set, not a counter: use"
                        + " add or remove");
            }
            throw unknown(increment.entity(), increment.seq(), "field '" + field + "' is not a declared counter"
                    + " (declared: " + counters + ")");
        }
    }

    private static void validateAttrs(SetField set, Operation.Add add) {
        for (String name : add.attrs().keySet()) {
            Optional<String> problem = Names.problemWithEntryName(name);
            if (problem.isEmpty() && name.equals(set.key())) {
                problem = Optional.of("'" + name + "' is the element key of '" + set.field() + "'");
            }
            problem.ifPresent(p -> {
                throw invalid(add.entity(), add.seq(), "attribute " + p);
            });
        }
        StorableValues.problem(add.attrs()).ifPresent(p -> {
            throw invalid(add.entity(), add.seq(), "attrs: " + p);
        });
    }

    private static Optional<String> forbidden(String field) {
        return Names.problemWithFieldName(field);
    }

    private List<String> registerNames() {
        List<String> names = new ArrayList<>(registers);
        ranked.forEach(r -> names.add(r.field()));
        return names;
    }

    private List<String> setNames() {
        List<String> names = new ArrayList<>();
        sets.forEach(s -> names.add(s.field()));
        return names;
    }

    /** A field the schema does not declare (yet): dead-lettered as {@code unknown_field}, replayable once it does. */
    private static UnknownFieldException unknown(String entity, long seq, String problem) {
        return new UnknownFieldException(problem + " (entity '" + entity + "', seq " + seq + ")");
    }

    private static InvalidInputException invalid(String entity, long seq, String problem) {
        return new InvalidInputException(problem + " (entity '" + entity + "', seq " + seq + ")");
    }

    /** Collects set fields, registers and counters; {@link #build()} validates them all at once. */
    public static final class Builder {
        private final List<SetField> sets = new ArrayList<>();
        private final List<String> registers = new ArrayList<>();
        private final List<String> counters = new ArrayList<>();
        private final List<RankedField> ranked = new ArrayList<>();

        private Builder() {
        }

        /**
         * A set field: live elements and their tombstones.
         *
         * @param set the set field
         * @return this builder
         */
        public Builder set(SetField set) {
            sets.add(set);
            return this;
        }

        /**
         * A register: a value the assignment with the highest seq sets.
         *
         * @param field the register's name
         * @return this builder
         */
        public Builder register(String field) {
            registers.add(field);
            return this;
        }

        /**
         * A counter: a whole number that {@code increment} operations add to, in any order, each once.
         *
         * @param field the counter's name
         * @return this builder
         */
        public Builder counter(String field) {
            counters.add(field);
            return this;
        }

        /**
         * A ranked register: {@code order} its values, lowest rank first; the highest-ranked value assigned wins,
         * ties to the higher seq (a status that only moves forward, a cancel nothing overrides).
         *
         * @param field the register's name
         * @param order its values, lowest rank first
         * @return this builder
         * @throws InvalidConfigurationException if the ranked register is not valid (see {@link RankedField}), at
         *                                       once rather than at {@link #build()}
         */
        public Builder ranked(String field, String... order) {
            ranked.add(RankedField.of(field, order));
            return this;
        }

        /**
         * The schema of everything declared so far.
         *
         * @return a new schema
         * @throws InvalidConfigurationException if the declarations are not valid, as the canonical constructor
         *                                       says
         */
        public CollectionSchema build() {
            return new CollectionSchema(sets, registers, counters, ranked);
        }
    }
}
