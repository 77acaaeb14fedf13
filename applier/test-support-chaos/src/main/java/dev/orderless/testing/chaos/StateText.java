package dev.orderless.testing.chaos;

import dev.orderless.apply.EntityState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * An entity's state as a counterexample shows it: the expected and the stored one in one format, a line of JSON each,
 * and what differs between them in words ({@code expected deleted at seq 28 (floor 28), stored not deleted}).
 */
final class StateText {
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();
    /** After a set field's name, the member that holds its tombstones. */
    private static final String REMOVED = " (removed)";

    private StateText() {
    }

    /**
     * {@code state} as one line of JSON: {@code _id}, {@code _floor} if a delete set one, each set's live elements
     * (key to seq and attributes) and, under {@code "<set> (removed)"}, its tombstones (key to seq), each register's
     * value and seq, each counter's value.
     */
    static String json(EntityState state) {
        BsonDocument doc = new BsonDocument("_id", new BsonString(state.entity()));
        if (state.floor() > 0) {
            doc.put("_floor", new BsonInt64(state.floor()));
        }
        for (String set : sets(state, state)) {
            BsonDocument live = new BsonDocument();
            state.live().getOrDefault(set, Map.of()).forEach((key, element) -> {
                BsonDocument entry = new BsonDocument("seq", new BsonInt64(element.seq()));
                entry.putAll(element.attrs());
                live.put(key, entry);
            });
            BsonDocument removed = new BsonDocument();
            state.tombstones().getOrDefault(set, Map.of()).forEach((key, seq) -> removed.put(key, new BsonInt64(seq)));
            if (!live.isEmpty()) {
                doc.put(set, live);
            }
            if (!removed.isEmpty()) {
                doc.put(set + REMOVED, removed);
            }
        }
        state.registers().forEach((field, register) -> doc.put(field, new BsonDocument("value", register.value())
                .append("seq", new BsonInt64(register.seq()))));
        state.counters().forEach((field, value) -> doc.put(field, dev.orderless.apply.CounterValues.stored(value)));
        return doc.toJson(JSON);
    }

    /**
     * What differs between {@code expected} and {@code stored}, one phrase per difference: the delete, then each set
     * element, register and counter that differs (the entity ids are not compared: a trial's has a prefix).
     */
    static List<String> differences(EntityState expected, EntityState stored) {
        List<String> differences = new ArrayList<>();
        if (expected.floor() != stored.floor()) {
            differences.add("expected " + deleted(expected.floor()) + ", stored " + deleted(stored.floor()));
        }
        for (String set : sets(expected, stored)) {
            TreeSet<String> keys = new TreeSet<>(expected.live().getOrDefault(set, Map.of()).keySet());
            keys.addAll(stored.live().getOrDefault(set, Map.of()).keySet());
            keys.addAll(expected.tombstones().getOrDefault(set, Map.of()).keySet());
            keys.addAll(stored.tombstones().getOrDefault(set, Map.of()).keySet());
            for (String key : keys) {
                String want = element(expected, set, key);
                String got = element(stored, set, key);
                if (!want.equals(got)) {
                    differences.add(set + " '" + key + "': expected " + want + ", stored " + got);
                }
            }
        }
        compare(expected.registers(), stored.registers(), r -> value(r.value()) + " at seq " + r.seq(), differences);
        compare(expected.counters(), stored.counters(), String::valueOf, differences);
        return differences;
    }

    private static String deleted(long floor) {
        return floor > 0 ? "deleted at seq " + floor + " (floor " + floor + ")" : "not deleted";
    }

    private static String element(EntityState state, String set, String key) {
        EntityState.Element live = state.live().getOrDefault(set, Map.of()).get(key);
        if (live != null) {
            return "live at seq " + live.seq() + (live.attrs().isEmpty() ? "" : " " + live.attrs().toJson(JSON));
        }
        Long removed = state.tombstones().getOrDefault(set, Map.of()).get(key);
        return removed != null ? "removed at seq " + removed : "absent";
    }

    /** Each field of either map whose entries differ, described by {@code described} (absent: "absent"). */
    private static <T> void compare(Map<String, T> expected, Map<String, T> stored, Function<T, String> described,
                                    List<String> differences) {
        TreeSet<String> fields = new TreeSet<>(expected.keySet());
        fields.addAll(stored.keySet());
        for (String field : fields) {
            T want = expected.get(field);
            T got = stored.get(field);
            if (!Objects.equals(want, got)) {
                differences.add(field + ": expected " + (want == null ? "absent" : described.apply(want)) + ", stored "
                        + (got == null ? "absent" : described.apply(got)));
            }
        }
    }

    /** A value as JSON: a string quoted, a number as itself, a document or date as Extended JSON. */
    private static String value(BsonValue value) {
        String wrapped = new BsonDocument("v", value).toJson(JSON);   // {"v": <the value>}
        return wrapped.substring("{\"v\": ".length(), wrapped.length() - 1);
    }

    /** The set fields either state has live elements or tombstones in, sorted. */
    private static TreeSet<String> sets(EntityState one, EntityState other) {
        TreeSet<String> sets = new TreeSet<>(one.live().keySet());
        sets.addAll(one.tombstones().keySet());
        sets.addAll(other.live().keySet());
        sets.addAll(other.tombstones().keySet());
        return sets;
    }
}
