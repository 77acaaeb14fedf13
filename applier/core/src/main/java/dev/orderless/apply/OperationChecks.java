package dev.orderless.apply;

import dev.orderless.InvalidInputException;

/** The checks {@link Operation}'s records make in their constructors, in one place. */
final class OperationChecks {
    private OperationChecks() {
    }

    static void common(String entity, long seq) {
        if (entity == null || entity.isEmpty()) {
            throw new InvalidInputException("entity is missing");
        }
        if (entity.length() > Operation.MAX_KEY_LENGTH) {
            throw new InvalidInputException("entity id is longer than " + Operation.MAX_KEY_LENGTH + " characters");
        }
        StorableValues.problemWithText(entity).ifPresent(p -> {
            throw new InvalidInputException("entity id " + p);
        });
        if (seq <= 0) {
            throw new InvalidInputException("seq must be positive, was " + seq + " (entity '" + entity + "')");
        }
    }

    static void key(String what, String value, String entity, long seq) {
        present(what, value, entity, seq);
        if (value.length() > Operation.MAX_KEY_LENGTH) {
            throw new InvalidInputException(what + " is longer than " + Operation.MAX_KEY_LENGTH
                    + " characters (entity '" + entity + "', seq " + seq + ")");
        }
        StorableValues.problemWithText(value).ifPresent(p -> {
            throw new InvalidInputException(what + " " + p + " (entity '" + entity + "', seq " + seq + ")");
        });
    }

    static void present(String what, String value, String entity, long seq) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException(what + " is missing (entity '" + entity + "', seq " + seq + ")");
        }
    }
}
