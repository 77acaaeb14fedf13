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

    /**
     * The entity this operation is on: the {@code _id} of its document.
     *
     * @return a non-empty string of at most {@link #MAX_KEY_LENGTH} characters
     */
    String entity();

    /**
     * The operation's stamp: with {@link #entity()}, it names exactly one operation, and it orders the entity's
     * operations.
     *
     * @return a positive number
     */
    long seq();

    /**
     * An {@link Add} with no attributes.
     *
     * @param entity  the entity's id
     * @param seq     the stamp, positive
     * @param field   the set field's live array
     * @param element the element's key
     * @return the operation
     * @throws InvalidInputException if entity, field or element is missing (null or empty), entity or element is
     *                               longer than {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is not
     *                               positive
     */
    static Add add(String entity, long seq, String field, String element) {
        return new Add(entity, seq, field, element, new BsonDocument());
    }

    /**
     * An {@link Add} with attributes stored beside the element's key.
     *
     * @param entity  the entity's id
     * @param seq     the stamp, positive
     * @param field   the set field's live array
     * @param element the element's key
     * @param attrs   the element's attributes, copied; {@code null} for none
     * @return the operation
     * @throws InvalidInputException if entity, field or element is missing (null or empty), entity or element is
     *                               longer than {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is not
     *                               positive
     */
    static Add add(String entity, long seq, String field, String element, BsonDocument attrs) {
        return new Add(entity, seq, field, element, attrs);
    }

    /**
     * A {@link Remove}.
     *
     * @param entity  the entity's id
     * @param seq     the stamp, positive
     * @param field   the set field's live array
     * @param element the element's key
     * @return the operation
     * @throws InvalidInputException if entity, field or element is missing (null or empty), entity or element is
     *                               longer than {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is not
     *                               positive
     */
    static Remove remove(String entity, long seq, String field, String element) {
        return new Remove(entity, seq, field, element);
    }

    /**
     * An {@link Assign}.
     *
     * @param entity the entity's id
     * @param seq    the stamp, positive
     * @param field  the register, plain or ranked
     * @param value  the value to set; whether MongoDB can store it is checked by
     *               {@link CollectionSchema#validate(Operation)}
     * @return the operation
     * @throws InvalidInputException if entity or field is missing (null, or an empty string) or value is null, entity is
     *                               longer than {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is not
     *                               positive
     */
    static Assign assign(String entity, long seq, String field, BsonValue value) {
        return new Assign(entity, seq, field, value);
    }

    /**
     * An {@link Increment}.
     *
     * @param entity the entity's id
     * @param seq    the stamp, positive
     * @param field  the counter
     * @param delta  what to add, negative allowed
     * @return the operation
     * @throws InvalidInputException if entity or field is missing (null or empty), entity is longer than
     *                               {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is not positive
     */
    static Increment increment(String entity, long seq, String field, long delta) {
        return new Increment(entity, seq, field, delta);
    }

    /**
     * A {@link Delete}.
     *
     * @param entity the entity's id
     * @param seq    the stamp, positive: what the entity is deleted as of
     * @return the operation
     * @throws InvalidInputException if entity is missing (null or empty), longer than {@link #MAX_KEY_LENGTH}
     *                               characters or not valid UTF-16, or seq is not positive
     */
    static Delete delete(String entity, long seq) {
        return new Delete(entity, seq);
    }

    /**
     * Makes {@code element} live in set {@code field}, with {@code attrs} stored beside its key.
     *
     * @param entity  the entity's id
     * @param seq     the stamp
     * @param field   the set field's live array
     * @param element the element's key
     * @param attrs   the element's attributes (empty for none)
     */
    record Add(String entity, long seq, String field, String element, BsonDocument attrs) implements Operation {
        /**
         * Checks what can be checked without a schema and keeps a copy of {@code attrs}.
         *
         * @param entity  the entity's id
         * @param seq     the stamp, positive
         * @param field   the set field's live array, not empty
         * @param element the element's key
         * @param attrs   the element's attributes, copied; {@code null} for none
         * @throws InvalidInputException if entity, field or element is missing (null or empty), entity or element is
         *                               longer than {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is
         *                               not positive
         */
        public Add {
            OperationChecks.common(entity, seq);
            OperationChecks.key("element", element, entity, seq);
            OperationChecks.present("field", field, entity, seq);
            attrs = attrs == null ? new BsonDocument() : attrs.clone();
        }

        /**
         * A copy: the operation is immutable.
         *
         * @return the element's attributes, empty for none; changing it changes nothing here
         */
        @Override
        public BsonDocument attrs() {
            return attrs.clone();
        }
    }

    /**
     * Removes {@code element} from set {@code field}, leaving a tombstone.
     *
     * @param entity  the entity's id
     * @param seq     the stamp
     * @param field   the set field's live array
     * @param element the element's key
     */
    record Remove(String entity, long seq, String field, String element) implements Operation {
        /**
         * Checks what can be checked without a schema.
         *
         * @param entity  the entity's id
         * @param seq     the stamp, positive
         * @param field   the set field's live array, not empty
         * @param element the element's key
         * @throws InvalidInputException if entity, field or element is missing (null or empty), entity or element is
         *                               longer than {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is
         *                               not positive
         */
        public Remove {
            OperationChecks.common(entity, seq);
            OperationChecks.key("element", element, entity, seq);
            OperationChecks.present("field", field, entity, seq);
        }
    }

    /**
     * Sets register {@code field} to {@code value} (last writer, by seq, wins).
     *
     * @param entity the entity's id
     * @param seq    the stamp
     * @param field  the register, plain or ranked
     * @param value  the value to set
     */
    record Assign(String entity, long seq, String field, BsonValue value) implements Operation {
        /**
         * Checks what can be checked without a schema; whether MongoDB can store {@code value} is checked by
         * {@link CollectionSchema#validate(Operation)}.
         *
         * @param entity the entity's id
         * @param seq    the stamp, positive
         * @param field  the register, not empty
         * @param value  the value to set, not {@code null}
         * @throws InvalidInputException if entity or field is missing (null, or an empty string) or value is null, entity
         *                               is longer than {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is
         *                               not positive
         */
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
     *
     * @param entity the entity's id
     * @param seq    the stamp
     * @param field  the counter
     * @param delta  what to add, negative allowed
     */
    record Increment(String entity, long seq, String field, long delta) implements Operation {
        /**
         * Checks what can be checked without a schema.
         *
         * @param entity the entity's id
         * @param seq    the stamp, positive
         * @param field  the counter, not empty
         * @param delta  what to add, negative allowed
         * @throws InvalidInputException if entity or field is missing (null or empty), entity is longer than
         *                               {@link #MAX_KEY_LENGTH} characters or not valid UTF-16, or seq is not positive
         */
        public Increment {
            OperationChecks.common(entity, seq);
            OperationChecks.present("field", field, entity, seq);
        }
    }

    /**
     * Deletes the entity as of {@code seq}: everything written with a lower seq goes (live elements
     * become tombstones, registers are cleared, counters keep only the increments above it), everything with a higher seq stays, and every later
     * delivered operation with a lower seq is superseded.
     *
     * @param entity the entity's id
     * @param seq    the stamp: what the entity is deleted as of
     */
    record Delete(String entity, long seq) implements Operation {
        /**
         * Checks the entity id and the seq.
         *
         * @param entity the entity's id
         * @param seq    the stamp, positive
         * @throws InvalidInputException if entity is missing (null or empty), longer than {@link #MAX_KEY_LENGTH}
         *                               characters or not valid UTF-16, or seq is not positive
         */
        public Delete {
            OperationChecks.common(entity, seq);
        }
    }
}
