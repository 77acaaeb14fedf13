package dev.orderless.apply;

import dev.orderless.InvalidConfigurationException;

/**
 * A declared set field: a last-writer-wins element set stored as two arrays, the live elements and
 * their tombstones, each entry identified by its {@code key} field.
 *
 * <pre>
 * classes:         [ {name: "CS 101", seq: 1001} ]   // field, key = "name"
 * deleted_classes: [ {name: "MA 201", seq: 1003} ]   // tombstones
 * </pre>
 *
 * @param field      the live array
 * @param tombstones the tombstone array
 * @param key        the field inside each entry that names the element
 */
public record SetField(String field, String tombstones, String key) {
    /**
     * Checks the three names.
     *
     * @param field      the live array
     * @param tombstones the tombstone array, a name other than {@code field}
     * @param key        the field inside each entry that names the element
     * @throws InvalidConfigurationException if a name is missing, empty, too long, starts with {@code $}, contains
     *                                       {@code .} or is reserved by orderless, or if {@code field} and
     *                                       {@code tombstones} are the same
     */
    public SetField {
        requireFieldName("field", field);
        requireFieldName("tombstones", tombstones);
        Names.problemWithEntryName(key).ifPresent(p -> {
            throw new InvalidConfigurationException("set field '" + field + "': key: " + p);
        });
        if (field.equals(tombstones)) {
            throw new InvalidConfigurationException(
                    "set field '" + field + "': the tombstone array needs a name of its own, e.g. 'deleted_" + field + "'");
        }
    }

    /**
     * The applier article's convention: {@code classes} and {@code deleted_classes}.
     *
     * @param field the live array; its tombstone array is {@code deleted_} followed by it
     * @param key   the field inside each entry that names the element
     * @return the set field
     * @throws InvalidConfigurationException if a name cannot be used, as for the constructor
     */
    public static SetField of(String field, String key) {
        return new SetField(field, "deleted_" + field, key);
    }

    private static void requireFieldName(String parameter, String name) {
        Names.problemWithFieldName(name).ifPresent(p -> {
            throw new InvalidConfigurationException("set field " + parameter + ": " + p);
        });
    }
}
