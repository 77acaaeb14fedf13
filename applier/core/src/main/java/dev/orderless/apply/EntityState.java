package dev.orderless.apply;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;

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
 * @param registers  register field to its value and seq
 */
public record EntityState(String entity, long floor, Map<String, Map<String, Element>> live,
                          Map<String, Map<String, Long>> tombstones, Map<String, Register> registers) {

    /** A live element: the seq that added it and its attributes. */
    public record Element(long seq, BsonDocument attrs) {
        public Element {
            attrs = attrs.clone();
        }
    }

    /** A register's value and the seq that assigned it. */
    public record Register(long seq, BsonValue value) {
    }

    public EntityState {
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

    /** Reads the observable state out of a stored document. */
    public static EntityState of(BsonDocument doc, CollectionSchema schema) {
        Map<String, Map<String, Element>> live = new TreeMap<>();
        Map<String, Map<String, Long>> tombstones = new TreeMap<>();
        for (SetField set : schema.sets()) {
            Map<String, Element> elements = new TreeMap<>();
            for (BsonValue value : Stored.array(doc, set.field())) {
                BsonDocument entry = value.asDocument();
                elements.put(entry.getString(set.key()).getValue(),
                        new Element(Stored.seqOf(entry), Stored.attrsOf(entry, set.key())));
            }
            live.put(set.field(), elements);
            Map<String, Long> removed = new TreeMap<>();
            for (BsonValue value : Stored.array(doc, set.tombstones())) {
                BsonDocument entry = value.asDocument();
                removed.put(entry.getString(set.key()).getValue(), Stored.seqOf(entry));
            }
            tombstones.put(set.field(), removed);
        }
        Map<String, Register> registers = new TreeMap<>();
        for (String register : schema.registers()) {
            long seq = Stored.registerSeq(doc, register);
            if (seq > 0) {
                registers.put(register, new Register(seq, doc.get(register)));
            }
        }
        return new EntityState(doc.getString(StoredFields.ID).getValue(), Stored.floor(doc), live, tombstones,
                registers);
    }

    /** The observable state of every document in {@code documents}, by {@code _id}. */
    public static java.util.SortedMap<String, EntityState> readAll(Iterable<BsonDocument> documents,
                                                                   CollectionSchema schema) {
        java.util.SortedMap<String, EntityState> states = new TreeMap<>();
        for (BsonDocument doc : documents) {
            states.put(doc.getString(StoredFields.ID).getValue(), of(doc, schema));
        }
        return states;
    }

    /** This state with every tombstone forgotten: what compaction must leave unchanged. */
    public EntityState withoutTombstones() {
        return new EntityState(entity, floor, live, Map.of(), registers);
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
