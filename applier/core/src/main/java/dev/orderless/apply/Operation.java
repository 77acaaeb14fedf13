package dev.orderless.apply;

import dev.orderless.InvalidInputException;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * One stamped operation on one entity. {@code (entity, seq)} names exactly one operation: the same pair
 * seen twice is a duplicate; two different operations with the same pair are a seq collision.
 *
 * <p>The reference semantics: an entity's state is what applying its operations one at a time, in
 * increasing seq order, each exactly once, gives. {@link GuardedApplier} reaches that state for any
 * delivery order, duplication and concurrency.
 *
 * <p>Constructors check what can be checked without a schema (present entity, positive seq, element
 * present) and throw {@link InvalidInputException}; {@link CollectionSchema#validate(Operation)}
 * checks the fields.
 */
public sealed interface Operation permits Operation.Add, Operation.Remove, Operation.Assign, Operation.Increment,
        Operation.Delete {
    /** Longest entity id or element key accepted (MongoDB index keys are limited in size). */
    int MAX_KEY_LENGTH = 512;

    String entity();

    long seq();

    static Add add(String entity, long seq, String field, String element) {
        return new Add(entity, seq, field, element, new BsonDocument());
    }

    static Add add(String entity, long seq, String field, String element, BsonDocument attrs) {
        return new Add(entity, seq, field, element, attrs);
    }

    static Remove remove(String entity, long seq, String field, String element) {
        return new Remove(entity, seq, field, element);
    }

    static Assign assign(String entity, long seq, String field, BsonValue value) {
        return new Assign(entity, seq, field, value);
    }

    static Increment increment(String entity, long seq, String field, long delta) {
        return new Increment(entity, seq, field, delta);
    }

    static Delete delete(String entity, long seq) {
        return new Delete(entity, seq);
    }

    /** Makes {@code element} live in set {@code field}, with {@code attrs} stored beside its key. */
    record Add(String entity, long seq, String field, String element, BsonDocument attrs) implements Operation {
        public Add {
            OperationChecks.common(entity, seq);
            OperationChecks.key("element", element, entity, seq);
            OperationChecks.present("field", field, entity, seq);
            attrs = attrs == null ? new BsonDocument() : attrs.clone();
        }

        /** A copy: the operation is immutable. */
        @Override
        public BsonDocument attrs() {
            return attrs.clone();
        }
    }

    /** Removes {@code element} from set {@code field}, leaving a tombstone. */
    record Remove(String entity, long seq, String field, String element) implements Operation {
        public Remove {
            OperationChecks.common(entity, seq);
            OperationChecks.key("element", element, entity, seq);
            OperationChecks.present("field", field, entity, seq);
        }
    }

    /** Sets register {@code field} to {@code value} (last writer, by seq, wins). */
    record Assign(String entity, long seq, String field, BsonValue value) implements Operation {
        public Assign {
            OperationChecks.common(entity, seq);
            OperationChecks.present("field", field, entity, seq);
            if (value == null) {
                throw new InvalidInputException("value is missing (entity '" + entity + "', seq " + seq + ")");
            }
        }
    }

    /**
     * Adds {@code delta} (negative allowed) to counter {@code field}: its value is the sum of the deltas of the
     * entity's increments above its last delete, each {@code (entity, seq)} counted once, in whatever order they
     * arrive. The same seq with the same delta again is a duplicate; with another delta, a seq collision.
     */
    record Increment(String entity, long seq, String field, long delta) implements Operation {
        public Increment {
            OperationChecks.common(entity, seq);
            OperationChecks.present("field", field, entity, seq);
        }
    }

    /**
     * Deletes the entity as of {@code seq}: everything written with a lower seq goes (live elements
     * become tombstones, registers are cleared, counters keep only the increments above it), everything with a higher seq stays, and every later
     * delivered operation with a lower seq is superseded.
     */
    record Delete(String entity, long seq) implements Operation {
        public Delete {
            OperationChecks.common(entity, seq);
        }
    }
}
