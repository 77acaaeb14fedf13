package dev.orderless.console.letters;

import com.rabbitmq.client.AMQP;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * A letter's AMQP properties as a BSON document and back, so that a letter kept in MongoDB is sent back with what it
 * carried: every property, and every header with its type (strings, whole numbers of 32 and 64 bits, decimals, dates,
 * bytes, lists and tables, as AMQP has them).
 */
final class AmqpDocuments {
    private AmqpDocuments() {
    }

    static BsonDocument of(AMQP.BasicProperties props) {
        BsonDocument doc = new BsonDocument();
        put(doc, "contentType", props.getContentType());
        put(doc, "contentEncoding", props.getContentEncoding());
        if (props.getHeaders() != null) {
            BsonDocument headers = new BsonDocument();
            props.getHeaders().forEach((name, value) -> headers.put(name, value(value)));
            doc.put("headers", headers);
        }
        put(doc, "deliveryMode", props.getDeliveryMode());
        put(doc, "priority", props.getPriority());
        put(doc, "correlationId", props.getCorrelationId());
        put(doc, "replyTo", props.getReplyTo());
        put(doc, "expiration", props.getExpiration());
        put(doc, "messageId", props.getMessageId());
        put(doc, "timestamp", props.getTimestamp());
        put(doc, "type", props.getType());
        put(doc, "userId", props.getUserId());
        put(doc, "appId", props.getAppId());
        return doc;
    }

    static AMQP.BasicProperties properties(BsonDocument doc) {
        Map<String, Object> headers = null;
        if (doc.isDocument("headers")) {
            headers = new LinkedHashMap<>();
            for (Map.Entry<String, BsonValue> header : doc.getDocument("headers").entrySet()) {
                headers.put(header.getKey(), plain(header.getValue()));
            }
        }
        return new AMQP.BasicProperties.Builder()
                .contentType(text(doc, "contentType")).contentEncoding(text(doc, "contentEncoding")).headers(headers)
                .deliveryMode(whole(doc, "deliveryMode")).priority(whole(doc, "priority"))
                .correlationId(text(doc, "correlationId")).replyTo(text(doc, "replyTo"))
                .expiration(text(doc, "expiration")).messageId(text(doc, "messageId"))
                .timestamp(doc.isDateTime("timestamp") ? new Date(doc.getDateTime("timestamp").getValue()) : null)
                .type(text(doc, "type")).userId(text(doc, "userId")).appId(text(doc, "appId")).build();
    }

    /** Each header as text, for an operator to read. */
    static Map<String, String> readable(BsonDocument properties) {
        Map<String, String> shown = new LinkedHashMap<>();
        properties.forEach((name, value) -> {
            if (!name.equals("headers")) {
                shown.put(name, readable(value));
            }
        });
        if (properties.isDocument("headers")) {
            properties.getDocument("headers").forEach((name, value) -> shown.put(name, readable(value)));
        }
        return shown;
    }

    private static String readable(BsonValue value) {
        if (value.isBinary()) {
            return "(" + value.asBinary().getData().length + " bytes)";
        }
        if (value.isDateTime()) {
            return java.time.Instant.ofEpochMilli(value.asDateTime().getValue()).toString();
        }
        return value.isString() ? value.asString().getValue() : String.valueOf(plain(value));
    }

    private static void put(BsonDocument doc, String name, Object value) {
        if (value != null) {
            doc.put(name, value(value));
        }
    }

    private static BsonValue value(Object value) {
        if (value instanceof String text) {
            return new BsonString(text);
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return new BsonInt32(((Number) value).intValue());
        }
        if (value instanceof Long n) {
            return new BsonInt64(n);
        }
        if (value instanceof Double || value instanceof Float) {
            return new BsonDouble(((Number) value).doubleValue());
        }
        if (value instanceof BigDecimal decimal) {
            return new BsonDecimal128(new Decimal128(decimal));
        }
        if (value instanceof Boolean b) {
            return BsonBoolean.valueOf(b);
        }
        if (value instanceof Date date) {
            return new BsonDateTime(date.getTime());
        }
        if (value instanceof byte[] bytes) {
            return new BsonBinary(bytes);
        }
        if (value instanceof List<?> list) {
            BsonArray array = new BsonArray();
            list.forEach(item -> array.add(value(item)));
            return array;
        }
        if (value instanceof Map<?, ?> map) {
            BsonDocument table = new BsonDocument();
            map.forEach((k, v) -> table.put(String.valueOf(k), value(v)));
            return table;
        }
        return new BsonString(String.valueOf(value));   // a LongString, or what a client library made of one
    }

    private static Object plain(BsonValue value) {
        return switch (value.getBsonType()) {
            case STRING -> value.asString().getValue();
            case INT32 -> value.asInt32().getValue();
            case INT64 -> value.asInt64().getValue();
            case DOUBLE -> value.asDouble().getValue();
            case DECIMAL128 -> value.asDecimal128().getValue().bigDecimalValue();
            case BOOLEAN -> value.asBoolean().getValue();
            case DATE_TIME -> new Date(value.asDateTime().getValue());
            case BINARY -> value.asBinary().getData();
            case ARRAY -> {
                List<Object> list = new ArrayList<>();
                value.asArray().forEach(item -> list.add(plain(item)));
                yield list;
            }
            case DOCUMENT -> {
                Map<String, Object> table = new LinkedHashMap<>();
                value.asDocument().forEach((k, v) -> table.put(k, plain(v)));
                yield table;
            }
            default -> null;
        };
    }

    private static String text(BsonDocument doc, String name) {
        return doc.isString(name) ? doc.getString(name).getValue() : null;
    }

    private static Integer whole(BsonDocument doc, String name) {
        return doc.isInt32(name) ? doc.getInt32(name).getValue() : null;
    }
}
