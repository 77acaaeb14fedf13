package dev.orderless.apply;

import java.util.Map;
import java.util.Optional;
import org.bson.BsonValue;

/**
 * Decides whether a value (an attribute or a register's value) can be stored and read back equal, before
 * any write: a lone UTF-16 surrogate is encoded as {@code ?} (the value read back differs from the value
 * written, and a guard comparing them never agrees); a nested name starting with {@code $}, containing
 * {@code .} or NUL is refused by MongoDB or changes meaning; nesting deeper than {@value #MAX_DEPTH}
 * levels approaches MongoDB's limit of 100 for the whole document.
 */
final class StorableValues {
    static final int MAX_DEPTH = 32;

    private StorableValues() {
    }

    /** Why {@code value} cannot be stored as given, or empty if it can. */
    static Optional<String> problem(BsonValue value) {
        return problem(value, 1);
    }

    /** Why {@code text} (an entity id, element key or field name) cannot round-trip, or empty. */
    /** {@code value} as JSON, at most 60 characters: for a reason that quotes it. */
    static String brief(BsonValue value) {
        String json = new org.bson.BsonDocument("v", value).toJson();
        json = json.substring(6, json.length() - 1).strip();   // {"v": ...}
        return json.length() <= 60 ? json : json.substring(0, 57) + "...";
    }

    static Optional<String> problemWithText(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return Optional.of("contains a lone UTF-16 surrogate (\\u" + Integer.toHexString(c)
                        + ") at index " + i + ", which is not valid UTF-8");
            }
        }
        return Optional.empty();
    }

    private static Optional<String> problem(BsonValue value, int depth) {
        if ((value.isArray() || value.isDocument()) && depth > MAX_DEPTH) {
            return Optional.of("is nested deeper than " + MAX_DEPTH + " levels");
        }
        if (value.isString()) {
            return problemWithText(value.asString().getValue()).map(p -> "a string " + p);
        }
        if (value.isArray()) {
            for (BsonValue item : value.asArray()) {
                Optional<String> p = problem(item, depth + 1);
                if (p.isPresent()) {
                    return p;
                }
            }
        }
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                Optional<String> p = problemWithName(e.getKey()).or(() -> problem(e.getValue(), depth + 1));
                if (p.isPresent()) {
                    return p;
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<String> problemWithName(String name) {
        if (name.startsWith("$")) {
            return Optional.of("a nested name '" + Names.clip(name) + "' starts with '$'");
        }
        if (name.indexOf('.') >= 0) {
            return Optional.of("a nested name '" + Names.clip(name) + "' contains '.'");
        }
        if (name.indexOf('\0') >= 0) {
            return Optional.of("a nested name contains a NUL character");
        }
        return problemWithText(name).map(p -> "a nested name " + p);
    }
}
