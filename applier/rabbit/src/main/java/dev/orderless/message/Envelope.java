package dev.orderless.message;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.orderless.InvalidInputException;
import dev.orderless.apply.Operation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The canonical JSON envelope (UTF-8, {@code content_type: application/json}), one operation per
 * message:
 *
 * <pre>
 * {"entity":"student-17","seq":1042,"op":"add","field":"classes","element":"CS 101","attrs":{"title":"Intro"}}
 * {"entity":"student-17","seq":1043,"op":"remove","field":"classes","element":"CS 101"}
 * {"entity":"student-17","seq":1044,"op":"assign","field":"name","value":"Ada"}
 * {"entity":"student-17","seq":1045,"op":"delete"}
 * </pre>
 *
 * Decoding is strict: a missing or mistyped member, a non-positive or fractional seq, an unknown op or
 * an unknown member is refused with a short reason, so a producer bug shows in the dead-letter queue
 * instead of becoming a wrong write. Field names are checked against the schema later, by the applier.
 */
public final class Envelope implements OperationDecoder {
    public static final String CONTENT_TYPE = "application/json";
    /**
     * The largest message, in bytes, that consumers accept and an outbox records unless set otherwise:
     * 256 KiB, far above any one operation, small enough that one message never holds a consumer up.
     */
    public static final int DEFAULT_MAX_BYTES = 256 * 1024;

    private static final Set<String> MEMBERS = Set.of("entity", "seq", "op", "field", "element", "attrs", "value");
    private final ObjectMapper json = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    @Override
    public Operation decode(byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (IOException e) {
            throw new InvalidInputException("not JSON: " + firstLine(e.getMessage()));
        }
        if (root == null || !root.isObject()) {
            throw new InvalidInputException("not a JSON object");
        }
        for (var name : (Iterable<String>) root::fieldNames) {
            if (!MEMBERS.contains(name)) {
                throw new InvalidInputException("unknown member '" + clip(name) + "'");
            }
        }
        String entity = text(root, "entity");
        long seq = seq(root);
        String op = text(root, "op");
        switch (op) {
            case "add":
                return Operation.add(entity, seq, text(root, "field"), text(root, "element"), attrs(root));
            case "remove":
                return Operation.remove(entity, seq, text(root, "field"), text(root, "element"));
            case "assign":
                if (!root.has("value")) {
                    throw new InvalidInputException("assign without 'value'");
                }
                return Operation.assign(entity, seq, text(root, "field"), JsonBson.toBson(root.get("value")));
            case "delete":
                return Operation.delete(entity, seq);
            default:
                throw new InvalidInputException("unknown op '" + clip(op) + "' (expected add, remove, assign or delete)");
        }
    }

    /** The canonical JSON of {@code op}, as UTF-8 bytes. */
    public byte[] encode(Operation op) {
        ObjectNode root = json.createObjectNode();
        root.put("entity", op.entity());
        root.put("seq", op.seq());
        if (op instanceof Operation.Add add) {
            root.put("op", "add").put("field", add.field()).put("element", add.element());
            if (!add.attrs().isEmpty()) {
                root.set("attrs", JsonBson.toJson(add.attrs()));
            }
        } else if (op instanceof Operation.Remove remove) {
            root.put("op", "remove").put("field", remove.field()).put("element", remove.element());
        } else if (op instanceof Operation.Assign assign) {
            root.put("op", "assign").put("field", assign.field()).set("value", JsonBson.toJson(assign.value()));
        } else {
            root.put("op", "delete");
        }
        try {
            return json.writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON for " + op, e);
        }
    }

    /** A readable one-line form of a body, for logs and tests. */
    public static String toString(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    private static String text(JsonNode root, String member) {
        JsonNode node = root.get(member);
        if (node == null || node.isNull()) {
            throw new InvalidInputException("missing '" + member + "'");
        }
        if (!node.isTextual()) {
            throw new InvalidInputException("'" + member + "' must be a string");
        }
        return node.asText();
    }

    private static long seq(JsonNode root) {
        JsonNode node = root.get("seq");
        if (node == null || node.isNull()) {
            throw new InvalidInputException("missing 'seq'");
        }
        if (!node.isIntegralNumber() || !node.canConvertToLong()) {
            throw new InvalidInputException("'seq' must be a whole number, was " + clip(node.toString()));
        }
        long seq = node.longValue();
        if (seq <= 0) {
            throw new InvalidInputException("'seq' must be positive, was " + seq);
        }
        return seq;
    }

    private static BsonDocument attrs(JsonNode root) {
        JsonNode node = root.get("attrs");
        if (node == null || node.isNull()) {
            return new BsonDocument();
        }
        if (!node.isObject()) {
            throw new InvalidInputException("'attrs' must be an object");
        }
        BsonValue value = JsonBson.toBson(node);
        return value.asDocument();
    }

    static String clip(String s) {
        return s.length() <= 60 ? s : s.substring(0, 57) + "...";
    }

    private static String firstLine(String message) {
        String line = message == null ? "" : message.lines().findFirst().orElse("");
        return clip(line);
    }
}
