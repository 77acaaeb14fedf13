package dev.orderless.message;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.orderless.InvalidInputException;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Converts between JSON trees and BSON values, keeping integers integral and nothing else implied. A
 * number BSON cannot hold exactly as a number (an integer past 64 bits, a double past its range) is
 * refused as bad input rather than silently truncated.
 */
final class JsonBson {
    private JsonBson() {
    }

    static BsonValue toBson(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return BsonNull.VALUE;
        }
        if (node.isTextual()) {
            return new BsonString(node.asText());
        }
        if (node.isBoolean()) {
            return BsonBoolean.valueOf(node.asBoolean());
        }
        if (node.isIntegralNumber()) {
            if (!node.canConvertToLong()) {
                throw new InvalidInputException("integer " + Envelope.clip(node.asText())
                        + " does not fit in 64 bits; send it as a string");
            }
            return node.canConvertToInt() ? new BsonInt32(node.intValue()) : new BsonInt64(node.longValue());
        }
        if (node.isNumber()) {
            if (!Double.isFinite(node.doubleValue())) {
                throw new InvalidInputException("number " + Envelope.clip(node.asText())
                        + " is out of the range of a double; send it as a string");
            }
            return new BsonDouble(node.doubleValue());
        }
        if (node.isArray()) {
            BsonArray array = new BsonArray();
            node.forEach(item -> array.add(toBson(item)));
            return array;
        }
        BsonDocument doc = new BsonDocument();
        for (Map.Entry<String, JsonNode> field : node.properties()) {
            doc.put(field.getKey(), toBson(field.getValue()));
        }
        return doc;
    }

    static JsonNode toJson(BsonValue value) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        switch (value.getBsonType()) {
            case STRING:
                return f.textNode(value.asString().getValue());
            case BOOLEAN:
                return f.booleanNode(value.asBoolean().getValue());
            case INT32:
                return f.numberNode(value.asInt32().getValue());
            case INT64:
                return f.numberNode(value.asInt64().getValue());
            case DOUBLE:
                return f.numberNode(value.asDouble().getValue());
            case NULL:
                return f.nullNode();
            case ARRAY:
                var array = f.arrayNode();
                value.asArray().forEach(v -> array.add(toJson(v)));
                return array;
            case DOCUMENT:
                ObjectNode object = f.objectNode();
                value.asDocument().forEach((k, v) -> object.set(k, toJson(v)));
                return object;
            default:
                throw new IllegalArgumentException("no JSON form for BSON " + value.getBsonType());
        }
    }
}
