package dev.orderless.apply;

import java.util.Optional;

/**
 * The one place that decides whether a name may become part of an update path. A name that reaches
 * MongoDB as {@code "$set"} or {@code "a.b"} would change what the update does, so such names are
 * refused before any query is built.
 */
final class Names {
    static final int MAX_LENGTH = 256;

    private Names() {
    }

    /** Why {@code name} cannot be a stored field name, or empty if it can. */
    static Optional<String> problemWithFieldName(String name) {
        Optional<String> syntax = problemWithSyntax(name);
        if (syntax.isPresent()) {
            return syntax;
        }
        if (StoredFields.RESERVED.contains(name)) {
            return Optional.of("'" + name + "' is reserved by orderless");
        }
        return Optional.empty();
    }

    /** Why {@code name} cannot be a field inside an array entry (element key or attribute). */
    static Optional<String> problemWithEntryName(String name) {
        Optional<String> syntax = problemWithSyntax(name);
        if (syntax.isPresent()) {
            return syntax;
        }
        if (StoredFields.RESERVED_IN_ENTRY.contains(name) || name.equals(StoredFields.ID)) {
            return Optional.of("'" + name + "' is reserved inside array entries");
        }
        return Optional.empty();
    }

    /** {@code name} cut to 40 characters, for reasons that quote it. */
    static String clip(String name) {
        return name.length() <= 40 ? name : name.substring(0, 37) + "...";
    }

    private static Optional<String> problemWithSyntax(String name) {
        if (name == null) {
            return Optional.of("name is missing");
        }
        if (name.isEmpty()) {
            return Optional.of("name is empty");
        }
        if (name.length() > MAX_LENGTH) {
            return Optional.of("name is longer than " + MAX_LENGTH + " characters");
        }
        if (name.startsWith("$")) {
            return Optional.of("'" + name + "' starts with '$'");
        }
        if (name.indexOf('.') >= 0) {
            return Optional.of("'" + name + "' contains '.'");
        }
        if (name.indexOf('\0') >= 0) {
            return Optional.of("name contains a NUL character");
        }
        return StorableValues.problemWithText(name).map(p -> "name " + p);
    }
}
