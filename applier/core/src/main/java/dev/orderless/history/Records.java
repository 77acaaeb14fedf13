package dev.orderless.history;

import static dev.orderless.history.HistoryFields.ADD;
import static dev.orderless.history.HistoryFields.ASSIGN;
import static dev.orderless.history.HistoryFields.AT;
import static dev.orderless.history.HistoryFields.ATTRS;
import static dev.orderless.history.HistoryFields.BASELINE;
import static dev.orderless.history.HistoryFields.COMPACTED;
import static dev.orderless.history.HistoryFields.CUTOFF;
import static dev.orderless.history.HistoryFields.DELETE;
import static dev.orderless.history.HistoryFields.ELEMENT;
import static dev.orderless.history.HistoryFields.ENTITY;
import static dev.orderless.history.HistoryFields.FIELD;
import static dev.orderless.history.HistoryFields.FLOOR;
import static dev.orderless.history.HistoryFields.FOLDED;
import static dev.orderless.history.HistoryFields.GC_FLOOR;
import static dev.orderless.history.HistoryFields.HORIZON;
import static dev.orderless.history.HistoryFields.ID;
import static dev.orderless.history.HistoryFields.LIVE;
import static dev.orderless.history.HistoryFields.LIVE_VERSION;
import static dev.orderless.history.HistoryFields.OP;
import static dev.orderless.history.HistoryFields.REGISTERS;
import static dev.orderless.history.HistoryFields.REMOVE;
import static dev.orderless.history.HistoryFields.SEQ;
import static dev.orderless.history.HistoryFields.STATE;
import static dev.orderless.history.HistoryFields.TOMBSTONES;
import static dev.orderless.history.HistoryFields.UNREADABLE;
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
        if (op instanceof Operation.Increment) {
            throw new IllegalStateException("the history records no counters (History refuses a schema with them)");
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
                case DELETE -> Operation.delete(entity, seq);
                default -> throw new IllegalArgumentException("unknown op " + record.get(OP));
            };
        } catch (RuntimeException e) {
            throw new OrderlessException("history record " + record.getDocument(ID).toJson() + " cannot be read as an"
                    + " operation (" + e.getMessage() + "); was it written by something other than orderless?", e);
        }
    }

    /**
     * The folded-state record of {@code state}, covering every operation with seq at or below {@code horizon},
     * folded from records recorded before {@code cutoff}.
     */
    static BsonDocument folded(EntityState state, long horizon, Instant cutoff, Instant at) {
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
        return new BsonDocument(ID, id(state.entity(), FOLDED))
                .append(HORIZON, new BsonInt64(horizon))
                .append(STATE, new BsonDocument(FLOOR, new BsonInt64(state.floor())).append(LIVE, live)
                        .append(TOMBSTONES, tombstones).append(REGISTERS, registers))
                .append(CUTOFF, new BsonDateTime(cutoff.toEpochMilli()))
                .append(AT, new BsonDateTime(at.toEpochMilli()));
    }

    /**
     * The folded-state record of a state taken from the live document by the baseline (see {@link Baseline}):
     * {@link #folded} with {@code baseline}, so that reads merge every record at or below its horizon.
     */
    static BsonDocument baseline(EntityState state, long horizon, Baseline baseline, Instant at) {
        BsonDocument found = new BsonDocument(HORIZON, new BsonInt64(baseline.horizon()))
                .append(COMPACTED, new BsonInt64(baseline.compacted())).append(LIVE_VERSION, new BsonInt64(baseline.version()))
                .append(AT, new BsonDateTime(baseline.at().toEpochMilli()));
        baseline.unreadable().ifPresent(why -> found.append(UNREADABLE, new BsonString(why)));
        return folded(state, horizon, at, at).append(BASELINE, found);
    }

    /** {@code record} (a retention pass's new folded state) with the baseline of {@code from}, if it has one. */
    static BsonDocument keepingBaseline(BsonDocument record, Optional<Baseline> from) {
        from.ifPresent(b -> record.append(BASELINE, baseline(History.empty(""), 0, b, b.at()).getDocument(BASELINE)));
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
            return new EntityState(entityOf(folded), state.getNumber(FLOOR).longValue(), live, tombstones, registers);
        } catch (RuntimeException e) {
            throw new OrderlessException("history record " + folded.getDocument(ID).toJson() + " cannot be read as a folded"
                    + " state (" + e.getMessage() + "); was it written by something other than orderless?", e);
        }
    }
}
