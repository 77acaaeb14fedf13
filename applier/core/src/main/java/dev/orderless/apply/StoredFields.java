package dev.orderless.apply;

import java.util.Set;

/**
 * The names orderless stores in every entity document, in one place. Declared fields (sets, their
 * tombstone arrays, registers) are named by the {@link CollectionSchema}; these are the rest.
 *
 * <pre>
 * { _id: "student-1",
 *   name: "Ada",                                        // a register
 *   classes:         [ {name: "CS 101", seq: 1001, title: "Intro"} ],   // live elements (+ attrs)
 *   deleted_classes: [ {name: "MA 201", seq: 1003, at: ISODate(..)} ],  // tombstones
 *   _seq: { name: 1000 },      // seq of each register's last assignment
 *   _floor: 0,                 // raised by delete(): ops with seq &lt;= _floor are superseded
 *   _gcFloor: 0,               // raised by compaction: highest seq of a dropped tombstone
 *   _v: 3 }                    // document version: +1 per applied write
 * </pre>
 */
public final class StoredFields {
    /** The entity key. */
    public static final String ID = "_id";
    /** Sub-document: register field name to the seq of its last assignment. */
    public static final String REGISTER_SEQS = "_seq";
    /** Seq of the latest applied delete(); 0 if none. */
    public static final String FLOOR = "_floor";
    /** Highest seq of a tombstone dropped by compaction; 0 if none. */
    public static final String GC_FLOOR = "_gcFloor";
    /** Document version, +1 on every applied write; the guard of compare-and-set writes and of views. */
    public static final String VERSION = "_v";
    /** Inside an array entry: the seq of the operation that wrote it. */
    public static final String ENTRY_SEQ = "seq";
    /** Inside a tombstone: when it was written (the applier's clock), for compaction's grace period. */
    public static final String ENTRY_AT = "at";

    /** Top-level names no schema may declare and no operation may touch. */
    public static final Set<String> RESERVED = Set.of(ID, REGISTER_SEQS, FLOOR, GC_FLOOR, VERSION);
    /** Names inside an array entry that neither an element key nor an attribute may use. */
    public static final Set<String> RESERVED_IN_ENTRY = Set.of(ENTRY_SEQ, ENTRY_AT);

    private StoredFields() {
    }
}
