package dev.orderless.history;

/**
 * The names stored in a history collection, in one place.
 *
 * <pre>
 * { _id: { entity: "student-17", seq: 1042 },      // one record per (entity, seq)
 *   op: "add", field: "classes", element: "CS 101", attrs: { title: "Intro" },   // the operation as received
 *   at: ISODate(...) }                             // when it was recorded
 * { _id: { entity: "student-17", seq: 1043 }, op: "assign", field: "name", value: "Ada", at: ... }
 * { _id: { entity: "student-17", seq: 1044 }, op: "remove", field: "classes", element: "CS 101", at: ... }
 * { _id: { entity: "student-17", seq: 1045 }, op: "delete", at: ... }
 * { _id: { entity: "student-17", seq: 1046 }, op: "increment", field: "credits", delta: 5, at: ... }
 *
 * { _id: { entity: "student-17", seq: 0 },         // after retention: the state as of horizon
 *   horizon: 1044,                                 // every record with seq &lt;= horizon is folded into state
 *   state: { floor: 0, live: { classes: [ {element: "CS 101", seq: 1042, attrs: {...}} ] },
 *            tombstones: { classes: [ {element: "MA 201", seq: 1003} ] },
 *            registers: { name: { seq: 1043, value: "Ada" }, status: { seq: 1040, value: "ENROLLED" } },
 *            counters: { credits: { upTo: 1030, sum: 12,        // increments up to 1030 folded into one sum
 *                                   inc: [ {seq: 1041, delta: 5} ],       // those after it, each once
                                   runs: [ {seq: 1050, hi: 1200, sum: 151} ] } },   // and in runs, as the live
                                                                         // document coalesced them
 *            ranked: { status: [ {value: "ENROLLED", seq: 1040} ] } },   // what a merged delete brings back
 *   gcFloor: 1003,                                 // the live _gcFloor the records accounted for when it was folded
 *   at: ISODate(...) }                             // when the pass folded it
 *
 * { _id: { entity: "student-17", seq: 0 },         // after the baseline: the live document's state as of horizon
 *   horizon: 1044, state: { ... }, cutoff: ISODate(...), at: ISODate(...),
 *   baseline: { horizon: 1044,                     // the highest seq the live document showed when it was taken
 *               compacted: 0,                      // its _gcFloor then: tombstones up to it were already dropped
 *               v: 7, at: ISODate(...),            // its _v, and when it was taken
 *               unreadable: "..." } }              // only if the document could not be read: why (nothing taken)
 * </pre>
 * Operation seqs are positive, so seq 0 is free for the folded state, and it sorts first. Without
 * {@code baseline}: a record at or below the horizon recorded before the cutoff was folded (a pass that stopped
 * before dropping it left it); one recorded after it arrived late. With {@code baseline} (a state taken from
 * the live document, which need not include every operation recorded so far): every record at or below the
 * horizon is merged into the state when it is read, whenever it was recorded; one already in it changes nothing.
 */
final class HistoryFields {
    static final String ID = "_id";
    static final String ENTITY = "entity";
    static final String SEQ = "seq";
    static final String ID_ENTITY = ID + "." + ENTITY;
    static final String ID_SEQ = ID + "." + SEQ;
    static final String OP = "op";
    static final String FIELD = "field";
    static final String ELEMENT = "element";
    static final String ATTRS = "attrs";
    static final String VALUE = "value";
    static final String AT = "at";

    static final String HORIZON = "horizon";
    static final String CUTOFF = "cutoff";
    static final String STATE = "state";
    static final String FLOOR = "floor";
    static final String LIVE = "live";
    static final String TOMBSTONES = "tombstones";
    static final String REGISTERS = "registers";
    static final String BASELINE = "baseline";
    static final String COMPACTED = "compacted";
    static final String GC_FLOOR = "gcFloor";
    static final String LIVE_VERSION = "v";
    static final String UNREADABLE = "unreadable";
    static final String COUNTERS = "counters";
    static final String RANKED = "ranked";
    static final String UP_TO = "upTo";
    static final String SUM = "sum";
    static final String INCREMENTS = "inc";
    static final String DELTA = "delta";
    static final String AS_LIVE = "asLive";
    static final String RUNS = "runs";
    static final String HI = "hi";

    static final String ADD = "add";
    static final String REMOVE = "remove";
    static final String ASSIGN = "assign";
    static final String DELETE = "delete";
    static final String INCREMENT = "increment";

    /** The seq of an entity's folded state: below every operation's. */
    static final long FOLDED = 0;

    private HistoryFields() {
    }
}
