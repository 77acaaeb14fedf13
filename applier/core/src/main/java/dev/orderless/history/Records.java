package dev.orderless.history;

import static dev.orderless.history.HistoryFields.ADD;
import static dev.orderless.history.HistoryFields.ASSIGN;
import static dev.orderless.history.HistoryFields.AT;
import static dev.orderless.history.HistoryFields.AS_LIVE;
import static dev.orderless.history.HistoryFields.ATTRS;
import static dev.orderless.history.HistoryFields.BASELINE;
import static dev.orderless.history.HistoryFields.COMPACTED;
import static dev.orderless.history.HistoryFields.COUNTERS;
import static dev.orderless.history.HistoryFields.CUTOFF;
import static dev.orderless.history.HistoryFields.DELETE;
import static dev.orderless.history.HistoryFields.DELTA;
import static dev.orderless.history.HistoryFields.ELEMENT;
import static dev.orderless.history.HistoryFields.ENTITY;
import static dev.orderless.history.HistoryFields.FIELD;
import static dev.orderless.history.HistoryFields.FLOOR;
import static dev.orderless.history.HistoryFields.FOLDED;
import static dev.orderless.history.HistoryFields.GC_FLOOR;
import static dev.orderless.history.HistoryFields.HORIZON;
import static dev.orderless.history.HistoryFields.ID;
import static dev.orderless.history.HistoryFields.INCREMENT;
import static dev.orderless.history.HistoryFields.INCREMENTS;
import static dev.orderless.history.HistoryFields.LIVE;
import static dev.orderless.history.HistoryFields.LIVE_VERSION;
import static dev.orderless.history.HistoryFields.OP;
import static dev.orderless.history.HistoryFields.RANKED;
import static dev.orderless.history.HistoryFields.REGISTERS;
import static dev.orderless.history.HistoryFields.REMOVE;
import static dev.orderless.history.HistoryFields.SEQ;
import static dev.orderless.history.HistoryFields.STATE;
import static dev.orderless.history.HistoryFields.SUM;
import static dev.orderless.history.HistoryFields.TOMBSTONES;
import static dev.orderless.history.HistoryFields.UNREADABLE;
import static dev.orderless.history.HistoryFields.UP_TO;
import static dev.orderless.history.HistoryFields.VALUE;

import com.mongodb.client.model.Filters;
import dev.orderless.OrderlessException;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/** Operations and folded states to and from their stored form ({@link HistoryFields}). */
final class Records {
    private Records() {
    }

    static BsonDocument id(String entity, long seq) {
        return new BsonDocument(ENTITY, new BsonString(entity)).append(SEQ, new BsonInt64(seq));
    }

    /** The record of {@code op}, recorded at {@code at}. */
    static BsonDocument of(Operation op, Instant at) {
        BsonDocument record = new BsonDocument(ID, id(op.entity(), op.seq()));
        record.putAll(body(op));
        return record.append(AT, new BsonDateTime(at.toEpochMilli()));
    }

    /** What a record says about its operation: equal for the same operation, whenever it was recorded. */
    static BsonDocument body(Operation op) {
        if (op instanceof Operation.Add add) {
            return new BsonDocument(OP, new BsonString(ADD)).append(FIELD, new BsonString(add.field()))
                    .append(ELEMENT, new BsonString(add.element())).append(ATTRS, add.attrs());
        }
        if (op instanceof Operation.Remove remove) {
            return new BsonDocument(OP, new BsonString(REMOVE)).append(FIELD, new BsonString(remove.field()))
                    .append(ELEMENT, new BsonString(remove.element()));
        }
        if (op instanceof Operation.Assign assign) {
            return new BsonDocument(OP, new BsonString(ASSIGN)).append(FIELD, new BsonString(assign.field()))
                    .append(VALUE, assign.value());
        }
        if (op instanceof Operation.Increment increment) {
            return new BsonDocument(OP, new BsonString(INCREMENT)).append(FIELD, new BsonString(increment.field()))
                    .append(DELTA, new BsonInt64(increment.delta()));
        }
        return new BsonDocument(OP, new BsonString(DELETE));
    }

    /** The body of a stored record, without its id and time. */
    static BsonDocument bodyOf(BsonDocument record) {
        BsonDocument body = record.clone();
        body.remove(ID);
        body.remove(AT);
        return body;
    }

    static String entityOf(BsonDocument record) {
        return record.getDocument(ID).getString(ENTITY).getValue();
    }

    static long seqOf(BsonDocument record) {
        return record.getDocument(ID).getNumber(SEQ).longValue();
    }

    static boolean isFolded(BsonDocument record) {
        return seqOf(record) == FOLDED;
    }

    static Instant atOf(BsonDocument record) {
        return Instant.ofEpochMilli(record.getDateTime(AT).getValue());
    }

    /** The operation a record holds; a record orderless did not write is an {@link OrderlessException}. */
    static Operation operationOf(BsonDocument record) {
        String entity = entityOf(record);
        long seq = seqOf(record);
        try {
            return switch (record.getString(OP).getValue()) {
                case ADD -> Operation.add(entity, seq, record.getString(FIELD).getValue(),
                        record.getString(ELEMENT).getValue(), record.getDocument(ATTRS, new BsonDocument()));
                case REMOVE -> Operation.remove(entity, seq, record.getString(FIELD).getValue(),
                        record.getString(ELEMENT).getValue());
                case ASSIGN -> Operation.assign(entity, seq, record.getString(FIELD).getValue(), record.get(VALUE));
                case INCREMENT -> Operation.increment(entity, seq, record.getString(FIELD).getValue(),
                        record.getNumber(DELTA).longValue());
                case DELETE -> Operation.delete(entity, seq);
                default -> throw new IllegalArgumentException("unknown op " + record.get(OP));
            };
        } catch (RuntimeException e) {
            throw new OrderlessException("history record " + record.getDocument(ID).toJson() + " cannot be read as an"
                    + " operation (" + e.getMessage() + "); was it written by something other than orderless?", e);
        }
    }

    /**
     * The folded-state record of {@code state} (with its {@code ledger}), covering every operation with seq at or
     * below {@code horizon}, folded from records recorded before {@code cutoff}. A counter's value is not stored
     * apart: the ledger holds it.
     */
    static BsonDocument folded(EntityState state, Ledger ledger, long horizon, Instant cutoff, Instant at) {
        ledger = ledger.coalesced();   // a hot counter's increments as runs, as on the live document
        BsonDocument live = new BsonDocument();
        state.live().forEach((field, elements) -> {
            BsonArray entries = new BsonArray();
            elements.forEach((element, e) -> entries.add(new BsonDocument(ELEMENT, new BsonString(element))
                    .append(SEQ, new BsonInt64(e.seq())).append(ATTRS, e.attrs())));
            live.append(field, entries);
        });
        BsonDocument tombstones = new BsonDocument();
        state.tombstones().forEach((field, removed) -> {
            BsonArray entries = new BsonArray();
            removed.forEach((element, seq) -> entries.add(new BsonDocument(ELEMENT, new BsonString(element))
                    .append(SEQ, new BsonInt64(seq))));
            tombstones.append(field, entries);
        });
        BsonDocument registers = new BsonDocument();
        state.registers().forEach((field, r) -> registers.append(field,
                new BsonDocument(SEQ, new BsonInt64(r.seq())).append(VALUE, r.value())));
        BsonDocument stateDoc = new BsonDocument(FLOOR, new BsonInt64(state.floor())).append(LIVE, live)
                .append(TOMBSTONES, tombstones).append(REGISTERS, registers);
        if (!ledger.counters().isEmpty()) {
            BsonDocument counters = new BsonDocument();
            ledger.counters().forEach((field, c) -> {
                BsonArray listed = new BsonArray();
                c.listed().forEach((seq, delta) -> listed.add(new BsonDocument(SEQ, new BsonInt64(seq))
                        .append(DELTA, new BsonInt64(delta))));
                BsonDocument counter = new BsonDocument(UP_TO, new BsonInt64(c.upTo()));
                if (c.folded()) {
                    counter.append(SUM, dev.orderless.apply.CounterValues.stored(c.base()));
                }
                if (!c.asLive()) {
                    counter.append(AS_LIVE, org.bson.BsonBoolean.FALSE);
                }
                if (!c.runs().isEmpty()) {
                    BsonArray runs = new BsonArray();
                    c.runs().forEach((lo, run) -> runs.add(new BsonDocument(SEQ, new BsonInt64(lo))
                            .append(HistoryFields.HI, new BsonInt64(run.hi()))
                            .append(SUM, dev.orderless.apply.CounterValues.stored(run.sum()))));
                    counter.append(HistoryFields.RUNS, runs);
                }
                counters.append(field, counter.append(INCREMENTS, listed));
            });
            stateDoc.append(COUNTERS, counters);
        }
        if (!ledger.ranked().isEmpty()) {
            BsonDocument ranked = new BsonDocument();
            ledger.ranked().forEach((field, candidates) -> {
                BsonArray entries = new BsonArray();
                candidates.forEach(candidate -> entries.add(new BsonDocument(VALUE, candidate.value())
                        .append(SEQ, new BsonInt64(candidate.seq()))));
                ranked.append(field, entries);
            });
            stateDoc.append(RANKED, ranked);
        }
        return new BsonDocument(ID, id(state.entity(), FOLDED))
                .append(HORIZON, new BsonInt64(horizon))
                .append(STATE, stateDoc)
                .append(CUTOFF, new BsonDateTime(cutoff.toEpochMilli()))
                .append(AT, new BsonDateTime(at.toEpochMilli()));
    }

    /**
     * The folded-state record of a state taken from the live document by the baseline (see {@link Baseline}):
     * {@link #folded} with {@code baseline}, so that reads merge every record at or below its horizon.
     */
    static BsonDocument baseline(EntityState state, Ledger ledger, long horizon, Baseline baseline, Instant at) {
        BsonDocument found = new BsonDocument(HORIZON, new BsonInt64(baseline.horizon()))
                .append(COMPACTED, new BsonInt64(baseline.compacted())).append(LIVE_VERSION, new BsonInt64(baseline.version()))
                .append(AT, new BsonDateTime(baseline.at().toEpochMilli()));
        baseline.unreadable().ifPresent(why -> found.append(UNREADABLE, new BsonString(why)));
        return folded(state, ledger, horizon, at, at).append(BASELINE, found);
    }

    /** {@code record} (a retention pass's new folded state) with the baseline of {@code from}, if it has one. */
    static BsonDocument keepingBaseline(BsonDocument record, Optional<Baseline> from) {
        from.ifPresent(b -> record.append(BASELINE, baseline(History.empty(""), Ledger.EMPTY, 0, b, b.at()).getDocument(BASELINE)));
        return record;
    }

    /**
     * A filter that matches {@code record} only as it is, every field equal: a write guarded by it is a
     * compare-and-set of the whole folded state, so two writers that read the same one cannot both replace it.
     */
    static Bson unchanged(BsonDocument record) {
        List<Bson> fields = new ArrayList<>();
        record.forEach((name, value) -> fields.add(Filters.eq(name, value)));
        return Filters.and(fields);
    }

    /** What the baseline that took {@code folded} from the live document found, if one did. */
    static Optional<Baseline> baselineOf(BsonDocument folded) {
        if (!folded.isDocument(BASELINE)) {
            return Optional.empty();
        }
        BsonDocument b = folded.getDocument(BASELINE);
        try {
            return Optional.of(new Baseline(b.getNumber(HORIZON).longValue(), b.getNumber(COMPACTED).longValue(),
                    b.getNumber(LIVE_VERSION).longValue(), Instant.ofEpochMilli(b.getDateTime(AT).getValue()),
                    b.isString(UNREADABLE) ? Optional.of(b.getString(UNREADABLE).getValue()) : Optional.empty()));
        } catch (RuntimeException e) {
            throw new OrderlessException("history record " + folded.getDocument(ID).toJson() + " has a baseline that"
                    + " cannot be read (" + e.getMessage() + "); was it written by something other than orderless?", e);
        }
    }

    /**
     * {@code folded} remembering that the live document's compaction floor {@code gcFloor} (the seq of a tombstone
     * compaction dropped) was accounted for by the records when it was folded: the record of that seq may be folded
     * and dropped since, and the state may no longer show it (the element added again).
     */
    static BsonDocument withGcFloor(BsonDocument folded, long gcFloor) {
        if (gcFloor > 0) {
            folded.append(GC_FLOOR, new BsonInt64(gcFloor));
        }
        return folded;
    }

    /** The live compaction floor a folded state accounts for ({@link #withGcFloor}); 0 if none. */
    static long gcFloorOf(BsonDocument folded) {
        BsonValue gcFloor = folded.get(GC_FLOOR);
        return gcFloor != null && gcFloor.isNumber() ? gcFloor.asNumber().longValue() : 0;
    }

    static Instant cutoffOf(BsonDocument folded) {
        return Instant.ofEpochMilli(folded.getDateTime(CUTOFF).getValue());
    }

    static long horizonOf(BsonDocument folded) {
        return folded.getNumber(HORIZON).longValue();
    }

    static EntityState stateOf(BsonDocument folded) {
        try {
            BsonDocument state = folded.getDocument(STATE);
            Map<String, Map<String, EntityState.Element>> live = new HashMap<>();
            state.getDocument(LIVE).forEach((field, entries) -> {
                Map<String, EntityState.Element> elements = new HashMap<>();
                for (BsonValue entry : entries.asArray()) {
                    BsonDocument e = entry.asDocument();
                    elements.put(e.getString(ELEMENT).getValue(),
                            new EntityState.Element(e.getNumber(SEQ).longValue(), e.getDocument(ATTRS)));
                }
                live.put(field, elements);
            });
            Map<String, Map<String, Long>> tombstones = new HashMap<>();
            state.getDocument(TOMBSTONES).forEach((field, entries) -> {
                Map<String, Long> removed = new HashMap<>();
                for (BsonValue entry : entries.asArray()) {
                    removed.put(entry.asDocument().getString(ELEMENT).getValue(),
                            entry.asDocument().getNumber(SEQ).longValue());
                }
                tombstones.put(field, removed);
            });
            Map<String, EntityState.Register> registers = new HashMap<>();
            state.getDocument(REGISTERS).forEach((field, r) -> registers.put(field,
                    new EntityState.Register(r.asDocument().getNumber(SEQ).longValue(), r.asDocument().get(VALUE))));
            return new EntityState(entityOf(folded), state.getNumber(FLOOR).longValue(), live, tombstones, registers,
                    ledgerOf(folded).values());
        } catch (RuntimeException e) {
            throw new OrderlessException("history record " + folded.getDocument(ID).toJson() + " cannot be read as a folded"
                    + " state (" + e.getMessage() + "); was it written by something other than orderless?", e);
        }
    }

    /** The ledger of a folded-state record (empty if it has none). */
    static Ledger ledgerOf(BsonDocument folded) {
        try {
            BsonDocument state = folded.getDocument(STATE);
            Map<String, Ledger.Counted> counters = new HashMap<>();
            state.getDocument(COUNTERS, new BsonDocument()).forEach((field, stored) -> {
                BsonDocument c = stored.asDocument();
                java.util.SortedMap<Long, Long> listed = new java.util.TreeMap<>();
                c.getArray(INCREMENTS).forEach(entry -> listed.put(entry.asDocument().getNumber(SEQ).longValue(),
                        entry.asDocument().getNumber(DELTA).longValue()));
                java.util.SortedMap<Long, Ledger.Run> runs = new java.util.TreeMap<>();
                c.getArray(HistoryFields.RUNS, new BsonArray()).forEach(entry -> runs.put(
                        entry.asDocument().getNumber(SEQ).longValue(), new Ledger.Run(entry.asDocument()
                                .getNumber(HistoryFields.HI).longValue(), dev.orderless.apply.CounterValues.read(
                                entry.asDocument().get(SUM)).orElseThrow())));
                counters.put(field, new Ledger.Counted(c.containsKey(SUM), c.getNumber(UP_TO).longValue(),
                        c.containsKey(SUM) ? dev.orderless.apply.CounterValues.read(c.get(SUM)).orElseThrow()
                                : java.math.BigInteger.ZERO, listed,
                        c.getBoolean(AS_LIVE, org.bson.BsonBoolean.TRUE).getValue(), runs));
            });
            Map<String, List<Ledger.Candidate>> ranked = new HashMap<>();
            state.getDocument(RANKED, new BsonDocument()).forEach((field, entries) -> {
                List<Ledger.Candidate> candidates = new ArrayList<>();
                entries.asArray().forEach(entry -> candidates.add(new Ledger.Candidate(entry.asDocument().get(VALUE),
                        entry.asDocument().getNumber(SEQ).longValue())));
                ranked.put(field, candidates);
            });
            return new Ledger(counters, ranked);
        } catch (RuntimeException e) {
            throw new OrderlessException("history record " + folded.getDocument(ID).toJson() + " cannot be read as a folded"
                    + " state (" + e.getMessage() + "); was it written by something other than orderless?", e);
        }
    }
}
