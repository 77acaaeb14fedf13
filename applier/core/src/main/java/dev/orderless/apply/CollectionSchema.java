package dev.orderless.apply;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.UnknownFieldException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

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
 */
public record CollectionSchema(List<SetField> sets, List<String> registers, List<String> counters) {
    public CollectionSchema {
        if (sets == null || registers == null || counters == null) {
            throw new InvalidConfigurationException("schema: sets, registers and counters must not be null (use an empty"
                    + " list)");
        }
        sets = List.copyOf(sets);
        registers = List.copyOf(registers);
        counters = List.copyOf(counters);
        if (sets.isEmpty() && registers.isEmpty() && counters.isEmpty()) {
            throw new InvalidConfigurationException("schema: declare at least one set field, register or counter");
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
    }

    /** A schema of sets and registers, without counters. */
    public CollectionSchema(List<SetField> sets, List<String> registers) {
        this(sets, registers, List.of());
    }

    private static void claim(Set<String> seen, String name) {
        if (!seen.add(name)) {
            throw new InvalidConfigurationException("schema: field '" + name + "' is declared twice");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The set field whose live array is {@code field}. */
    public Optional<SetField> set(String field) {
        return sets.stream().filter(s -> s.field().equals(field)).findFirst();
    }

    public boolean hasRegister(String field) {
        return registers.contains(field);
    }

    public boolean hasCounter(String field) {
        return counters.contains(field);
    }

    /**
     * Checks that {@code op} touches only declared fields and that its attributes are storable.
     *
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
        return set(field).orElseThrow(() -> unknown(entity, seq, "field '" + field + "' is not a declared set field"
                + " (declared: " + setNames() + ")"));
    }

    private void requireRegister(Operation.Assign assign) {
        String field = assign.field();
        forbidden(field).ifPresent(p -> {
            throw invalid(assign.entity(), assign.seq(), "field " + p);
        });
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
                    + registers + ")");
        }
    }

    private void requireCounter(Operation.Increment increment) {
        String field = increment.field();
        forbidden(field).ifPresent(p -> {
            throw invalid(increment.entity(), increment.seq(), "field " + p);
        });
        if (!hasCounter(field)) {
            if (hasRegister(field)) {
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

        private Builder() {
        }

        public Builder set(SetField set) {
            sets.add(set);
            return this;
        }

        public Builder register(String field) {
            registers.add(field);
            return this;
        }

        /** A counter: a whole number that {@code increment} operations add to, in any order, each once. */
        public Builder counter(String field) {
            counters.add(field);
            return this;
        }

        public CollectionSchema build() {
            return new CollectionSchema(sets, registers, counters);
        }
    }
}
