package dev.orderless.apply;

import dev.orderless.CannotApplyException;

import java.math.BigInteger;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The observable state of one entity: what two documents must agree on to be "the same", whatever
 * order their operations arrived in. Built from a stored document with {@link #of} or by the
 * {@link dev.orderless.oracle.ReferenceModel}.
 *
 * <p>Left out, because they record how the state was reached rather than what it is: {@code _v},
 * {@code _gcFloor}, tombstone timestamps, and tombstones at or below {@code _floor} (the floor already
 * says everything before it is gone; whether such a tombstone exists depends on whether the element
 * arrived before or after the delete). Empty sets and absent sets are the same.
 *
 * @param entity     the {@code _id}
 * @param floor      seq of the latest delete, 0 if none
 * @param live       set field to element key to element
 * @param tombstones set field to element key to the seq of its removal (above the floor only)
 * @param registers  register field to its value and seq (a ranked register's: its winner's)
 * @param counters   counter field to its value (the exact sum of its increments above the floor), for each
 *                   counter that has one (a counter with no increment above the last delete has none: read it as 0)
 */
public record EntityState(String entity, long floor, Map<String, Map<String, Element>> live,
                          Map<String, Map<String, Long>> tombstones, Map<String, Register> registers,
                          Map<String, BigInteger> counters) {

    private static final Logger log = LoggerFactory.getLogger(EntityState.class);

    /**
     * A live element: the seq that added it and its attributes.
     *
     * @param seq   the seq of the add that made it live
     * @param attrs its attributes (everything in its entry but its key, seq and timestamp); empty for none
     */
    public record Element(long seq, BsonDocument attrs) {
        /**
         * Keeps a copy of {@code attrs}.
         *
         * @param seq   the seq of the add that made it live
         * @param attrs its attributes, not {@code null}; copied
         */
        public Element {
            attrs = attrs.clone();
        }
    }

    /**
     * A register's value and the seq that assigned it.
     *
     * @param seq   the seq of the assignment; 0 for a value stored before orderless wrote the register
     * @param value the value
     */
    public record Register(long seq, BsonValue value) {
    }

    /**
     * A state without counters.
     *
     * @param entity     the {@code _id}
     * @param floor      seq of the latest delete, 0 if none
     * @param live       set field to element key to element
     * @param tombstones set field to element key to the seq of its removal; those at or below {@code floor} are
     *                   dropped
     * @param registers  register field to its value and seq
     */
    public EntityState(String entity, long floor, Map<String, Map<String, Element>> live,
                       Map<String, Map<String, Long>> tombstones, Map<String, Register> registers) {
        this(entity, floor, live, tombstones, registers, Map.of());
    }

    /**
     * Keeps unmodifiable, sorted copies of the maps, in the form two equal states share: sets without elements
     * and tombstones at or below {@code floor} are dropped.
     *
     * @param entity     the {@code _id}
     * @param floor      seq of the latest delete, 0 if none
     * @param live       set field to element key to element
     * @param tombstones set field to element key to the seq of its removal
     * @param registers  register field to its value and seq
     * @param counters   counter field to its value
     */
    public EntityState {
        counters = Collections.unmodifiableMap(new TreeMap<>(counters));
        live = frozen(live);
        registers = Collections.unmodifiableMap(new TreeMap<>(registers));
        Map<String, Map<String, Long>> above = new TreeMap<>();
        for (var field : tombstones.entrySet()) {
            Map<String, Long> kept = new TreeMap<>();
            field.getValue().forEach((element, seq) -> {
                if (seq > floor) {
                    kept.put(element, seq);
                }
            });
            if (!kept.isEmpty()) {
                above.put(field.getKey(), Collections.unmodifiableMap(kept));
            }
        }
        tombstones = Collections.unmodifiableMap(above);
    }

    /**
     * Why {@code doc} cannot be read as an orderless state, if it cannot: a set stored otherwise than as an array of
     * entry documents each holding the set's key as a string (a value another program wrote, {@code classes:
     * ["CS 101"]}, or one value where an array belongs), or a counter that is not a whole number (a 32- or 64-bit
     * integer, or a {@code Decimal128} holding one, as {@link CounterValues} stores a sum past a long).
     *
     * @param doc    a stored entity document
     * @param schema the schema of its collection
     * @return the first problem found, or empty for a document orderless can read
     */
    public static Optional<String> unreadable(BsonDocument doc, CollectionSchema schema) {
        for (SetField set : schema.sets()) {
            for (String array : List.of(set.field(), set.tombstones())) {
                BsonValue entries = doc.get(array);
                if (entries == null || entries.isNull()) {
                    continue;
                }
                if (!entries.isArray()) {
                    return Optional.of("'" + array + "' is a " + type(entries) + ", not an array");
                }
                for (int i = 0; i < entries.asArray().size(); i++) {
                    BsonValue entry = entries.asArray().get(i);
                    if (!entry.isDocument()) {
                        return Optional.of("'" + array + "' entry " + i + " is a " + type(entry) + ", not a document");
                    }
                    BsonValue key = entry.asDocument().get(set.key());
                    if (key == null || !key.isString()) {
                        return Optional.of("'" + array + "' entry " + i + " has " + (key == null
                                ? "no key '" + set.key() + "'"
                                : "a key '" + set.key() + "' that is a " + type(key) + ", not a string"));
                    }
                }
            }
        }
        for (String counter : schema.counters()) {
            BsonValue value = doc.get(counter);
            if (value != null && CounterValues.read(value).isEmpty()) {
                return Optional.of("counter '" + counter + "' is a " + type(value) + ", not a whole number");
            }
        }
        return Optional.empty();
    }

    private static String type(BsonValue value) {
        return value.getBsonType().name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * Reads the observable state out of a stored document. An element with more than one entry across its live
     * and tombstone arrays (an invariant nothing orderless writes breaks; see {@link DuplicateEntries}) is read
     * as its entry with the highest seq, live or tombstone, and logged at ERROR naming the entity and the
     * element, never read as whichever entry comes last.
     *
     * @param doc    a stored entity document, with a string {@code _id}
     * @param schema the schema of its collection: only what it declares is read
     * @return the document's observable state
     * @throws CannotApplyException of kind {@code NO_PROGRESS} if the document is {@link #unreadable}
     */
    public static EntityState of(BsonDocument doc, CollectionSchema schema) {
        Map<String, Map<String, Element>> live = new TreeMap<>();
        Map<String, Map<String, Long>> tombstones = new TreeMap<>();
        String entity = doc.getString(StoredFields.ID).getValue();
        Optional<String> unreadable = unreadable(doc, schema);
        if (unreadable.isPresent()) {
            // refused, not guessed: reading past it would lose what the field holds
            throw new CannotApplyException(CannotApplyException.Kind.NO_PROGRESS, "document '" + entity + "': "
                    + unreadable.get() + ", which orderless cannot read: migrate it (docs/operations.md)");
        }
        for (SetField set : schema.sets()) {
            Map<String, Element> elements = new TreeMap<>();
            Map<String, Long> removed = new TreeMap<>();
            for (BsonValue value : Stored.array(doc, set.field())) {
                BsonDocument entry = value.asDocument();
                String key = entry.getString(set.key()).getValue();
                long seq = Stored.seqOf(entry);
                if (!elements.containsKey(key) || elements.get(key).seq() < seq) {
                    elements.put(key, new Element(seq, Stored.attrsOf(entry, set.key())));
                }
            }
            for (BsonValue value : Stored.array(doc, set.tombstones())) {
                BsonDocument entry = value.asDocument();
                String key = entry.getString(set.key()).getValue();
                long seq = Stored.seqOf(entry);
                Element alive = elements.get(key);
                if (alive != null && alive.seq() >= seq) {
                    continue;   // live at a higher seq: this tombstone is the older entry
                }
                elements.remove(key);
                removed.merge(key, seq, Math::max);
            }
            live.put(set.field(), elements);
            tombstones.put(set.field(), removed);
        }
        Map<String, Register> registers = new TreeMap<>();
        List<String> allRegisters = new java.util.ArrayList<>(schema.registers());
        schema.ranked().forEach(ranked -> allRegisters.add(ranked.field()));
        for (String register : allRegisters) {
            long seq = Stored.registerSeq(doc, register);
            if (seq > 0 || doc.containsKey(register)) {   // seq 0: a value there before orderless wrote
                registers.put(register, new Register(seq, doc.get(register)));
            }
        }
        List<DuplicateEntries.Duplicate> duplicates = DuplicateEntries.in(doc, schema);
        if (!duplicates.isEmpty()) {
            log.error(DuplicateEntries.describe("a document", entity, duplicates));
        }
        Map<String, BigInteger> counters = new TreeMap<>();
        for (String counter : schema.counters()) {
            CounterValues.read(doc.get(counter)).ifPresent(value -> counters.put(counter, value));
        }
        return new EntityState(entity, Stored.floor(doc), live, tombstones, registers, counters);
    }

    /**
     * The observable state of every document in {@code documents}, by {@code _id}.
     *
     * @param documents stored entity documents, each with a string {@code _id}
     * @param schema    the schema of their collection
     * @return each document's state as {@link #of} reads it, sorted by {@code _id}
     * @throws CannotApplyException of kind {@code NO_PROGRESS} if a document is {@link #unreadable}
     */
    public static java.util.SortedMap<String, EntityState> readAll(Iterable<BsonDocument> documents,
                                                                   CollectionSchema schema) {
        java.util.SortedMap<String, EntityState> states = new TreeMap<>();
        for (BsonDocument doc : documents) {
            states.put(doc.getString(StoredFields.ID).getValue(), of(doc, schema));
        }
        return states;
    }

    /**
     * This state with every tombstone forgotten: what compaction must leave unchanged.
     *
     * @return a copy without tombstones, everything else equal
     */
    public EntityState withoutTombstones() {
        return new EntityState(entity, floor, live, Map.of(), registers, counters);
    }

    private static Map<String, Map<String, Element>> frozen(Map<String, Map<String, Element>> live) {
        Map<String, Map<String, Element>> copy = new TreeMap<>();
        live.forEach((field, elements) -> {
            if (!elements.isEmpty()) {
                copy.put(field, Collections.unmodifiableMap(new TreeMap<>(elements)));
            }
        });
        return Collections.unmodifiableMap(copy);
    }
}
