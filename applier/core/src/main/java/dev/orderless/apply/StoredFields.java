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
 *   credits: 7,                                         // a counter: the exact sum (a long; a Decimal128 past one)
 *   _inc: { credits: [ {seq: 1007, d: 3, at: ISODate(..)} ] },           // its increments pushed one by one
 *   _incRuns: { credits: [ {seq: 1001, hi: 1004, d: 4, at: ISODate(..)} ] },  // and coalesced into runs
 *   _incFloor: { credits: 0 }, // raised by compaction: increments at or below are folded into the value
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
    /**
     * Sub-document: counter field name to the array of its increments pushed one by one and not coalesced or folded
     * yet ({@code {seq, d, at}}), at most 250.
     */
    public static final String INCREMENTS = "_inc";
    /**
     * Sub-document: counter field name to the array of its runs not folded yet ({@code {seq, hi, d, at}}): every seq
     * from {@code seq} to {@code hi} was an increment of the counter, counted once; {@code d} is their sum and
     * {@code at} when the newest was counted.
     */
    public static final String INCREMENT_RUNS = "_incRuns";
    /** Inside a run of increments: its highest seq. */
    public static final String ENTRY_HI = "hi";
    /**
     * Sub-document: counter field name to the highest seq compaction folded into its value; an increment at or
     * below it cannot be told from one already counted, and is refused as beyond the horizon.
     */
    public static final String INCREMENT_FLOOR = "_incFloor";
    /** Inside an increment entry: its delta. */
    public static final String ENTRY_DELTA = "d";
    /**
     * Sub-document: ranked register name to the assignments a later delete could still bring back
     * ({@code {v, seq}}), the winner among them.
     */
    public static final String RANKED = "_ranked";
    /** Inside a ranked assignment: its value (its rank is read from the value and the declared order). */
    public static final String ENTRY_VALUE = "v";
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
    public static final Set<String> RESERVED = Set.of(ID, REGISTER_SEQS, INCREMENTS, INCREMENT_RUNS, INCREMENT_FLOOR,
            RANKED, FLOOR, GC_FLOOR, VERSION);
    /** Names inside an array entry that neither an element key nor an attribute may use. */
    public static final Set<String> RESERVED_IN_ENTRY = Set.of(ENTRY_SEQ, ENTRY_AT);

    private StoredFields() {
    }
}
