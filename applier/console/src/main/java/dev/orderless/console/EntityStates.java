package dev.orderless.console;

import dev.orderless.apply.EntityState;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** An entity's state as the console shows it: each set's live elements, each register's value, each counter. */
final class EntityStates {
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    private EntityStates() {
    }

    /** A string, number or boolean as itself; anything else (a document, an array, a date) as its JSON text. */
    private static Object plain(org.bson.BsonValue value) {
        if (value.isString()) {
            return value.asString().getValue();
        }
        if (value.isInt32() || value.isInt64()) {
            return value.asNumber().longValue();
        }
        if (value.isDouble()) {
            return value.asDouble().getValue();
        }
        if (value.isBoolean()) {
            return value.asBoolean().getValue();
        }
        String wrapped = new BsonDocument("v", value).toJson(JSON);   // {"v": <the value>}
        return wrapped.substring("{\"v\": ".length(), wrapped.length() - 1);
    }

    /** Field name to what it holds: sets as their live elements, registers and counters as their values. */
    static Map<String, Object> describe(EntityState state) {
        Map<String, Object> fields = new LinkedHashMap<>();
        state.live().forEach((field, elements) -> fields.put(field, new TreeMap<>(elements).keySet()));
        state.registers().forEach((field, register) -> fields.put(field, plain(register.value())));
        state.counters().forEach(fields::put);
        return fields;
    }
}
