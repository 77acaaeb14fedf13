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

    /** Field name to what it holds, as JSON text for values: the page shows text, never markup. */
    static Map<String, Object> describe(EntityState state) {
        Map<String, Object> fields = new LinkedHashMap<>();
        state.live().forEach((field, elements) -> fields.put(field, new TreeMap<>(elements).keySet()));
        state.registers().forEach((field, register) ->
                fields.put(field, new BsonDocument("v", register.value()).toJson(JSON).replaceFirst("^\\{\"v\": ", "")
                        .replaceFirst("}$", "")));
        state.counters().forEach(fields::put);
        return fields;
    }
}
