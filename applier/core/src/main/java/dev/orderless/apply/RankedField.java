package dev.orderless.apply;

import dev.orderless.InvalidConfigurationException;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A declared ranked register: a register whose values are ordered, where the value with the highest rank wins and
 * ties go to the higher seq, whatever order the assignments arrive in. A status that only moves forward
 * ({@code PLACED < PAID < SHIPPED < DELIVERED}), or a cancel that nothing overrides ({@code CANCELLED} last).
 *
 * <pre>
 * status: "SHIPPED",                                  // the winner, a plain value
 * _seq:   { status: 1007 },                           // its seq
 * _ranked: { status: [ {v: "SHIPPED", seq: 1007}, {v: "PAID", seq: 1009} ] }
 * </pre>
 * {@code _ranked} keeps the assignments a later delete could still bring back: those no assignment with a higher
 * seq outranks (or equals); at most one per rank. Ranks are read from the values and the order declared now, never
 * stored: a value may be added to the order, at its end or in the middle, and what is stored is ranked anew. An
 * assignment of a value outside {@code order} is bad input naming the values.
 *
 * @param field the register
 * @param order its values, lowest rank first
 */
public record RankedField(String field, List<String> order) {
    /**
     * Checks the register's name and its order, and keeps an unmodifiable copy of the order.
     *
     * @param field the register
     * @param order its values, lowest rank first: at least one, each once, none empty
     * @throws InvalidConfigurationException if {@code field} cannot be a stored field name, or {@code order} is
     *                                       missing, empty, or holds an empty or repeated value
     */
    public RankedField {
        Names.problemWithFieldName(field).ifPresent(p -> {
            throw new InvalidConfigurationException("ranked register: " + p);
        });
        if (order == null || order.isEmpty()) {
            throw new InvalidConfigurationException("ranked register '" + field + "': order its values, lowest first"
                    + " (e.g. PLACED, PAID, SHIPPED)");
        }
        order = List.copyOf(order);
        Set<String> seen = new HashSet<>();
        for (String value : order) {
            if (value.isEmpty() || !seen.add(value)) {
                throw new InvalidConfigurationException("ranked register '" + field + "': each value once and not"
                        + " empty, was " + order);
            }
        }
    }

    /**
     * A ranked register with its values listed in place.
     *
     * @param field the register
     * @param order its values, lowest rank first
     * @return the ranked register
     * @throws InvalidConfigurationException as the constructor does
     */
    public static RankedField of(String field, String... order) {
        return new RankedField(field, List.of(order));
    }

    /**
     * The rank of {@code value} (0 the lowest), if it is one of {@link #order()}.
     *
     * @param value a value of the register
     * @return its index in {@link #order()}, or empty if the order does not hold it
     */
    public OptionalInt rank(String value) {
        int rank = order.indexOf(value);
        return rank < 0 ? OptionalInt.empty() : OptionalInt.of(rank);
    }
}
