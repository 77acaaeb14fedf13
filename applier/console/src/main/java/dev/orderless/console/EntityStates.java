package dev.orderless.console;

import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.SetField;
import dev.orderless.apply.StoredFields;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * An entity's state as the console shows it: each set's live entries as the live document holds them (the element's
 * key, the seq that wrote it, its attributes), each register's value, each counter.
 */
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

    /**
     * Field name to what it holds: a set as its live entries in element order, each {@code {<key>: element, seq: n,
     * <attribute>: value...}} as in the live document (without the time of the write, which the history does not
     * keep), so that an attribute's value at each seq shows; registers and counters as their values.
     */
    static Map<String, Object> describe(EntityState state, CollectionSchema schema) {
        Map<String, Object> fields = new LinkedHashMap<>();
        state.live().forEach((field, elements) -> {
            String key = schema.sets().stream().filter(set -> set.field().equals(field)).map(SetField::key)
                    .findFirst().orElse("element");
            List<Map<String, Object>> entries = new ArrayList<>();
            elements.forEach((element, live) -> {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put(key, element);
                entry.put(StoredFields.ENTRY_SEQ, live.seq());
                live.attrs().forEach((name, value) -> entry.put(name, plain(value)));
                entries.add(entry);
            });
            fields.put(field, entries);
        });
        state.registers().forEach((field, register) -> fields.put(field, plain(register.value())));
        state.counters().forEach(fields::put);
        return fields;
    }
}
