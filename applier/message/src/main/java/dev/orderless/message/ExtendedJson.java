package dev.orderless.message;

import com.fasterxml.jackson.databind.JsonNode;
import dev.orderless.InvalidInputException;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonParseException;
import org.bson.json.JsonWriterSettings;

/**
 * The envelope's values (an assignment's {@code value}, an add's {@code attrs}) as MongoDB Extended JSON v2, through
 * the driver's own codec, so that a value is stored with exactly the BSON type it was sent with.
 *
 * <p>Written in relaxed mode, except that a 64-bit integer is always written canonically
 * ({@code {"$numberLong": "5"}}): relaxed mode writes a small one as a plain number, which reads back as a 32-bit
 * integer. So a plain JSON number carries an Int32 (a whole number) or a Double (one with a point or an exponent),
 * and every other type travels in its Extended JSON wrapper ({@code $numberLong}, {@code $numberDecimal},
 * {@code $date}, {@code $oid}, {@code $binary}, {@code $numberDouble} for NaN and the infinities). Read with the
 * driver's {@code JsonReader}, which takes both modes, so plain JSON written by hand reads as before: a whole number
 * as an Int32 where it fits, else an Int64; a number with a point as a Double.
 *
 * <p>The envelope carries the types that hold data: {@link #CARRIED}. The others are refused on both sides, naming
 * the type and where it is: a timestamp (MongoDB replaces an empty one on insert, so the stored value could differ
 * from the sent one), and code, patterns, symbols, min/max keys, undefined and DB pointers (internal or deprecated).
 */
final class ExtendedJson {
    /** The BSON types a value may hold, at any depth. */
    static final Set<BsonType> CARRIED = Set.copyOf(EnumSet.of(BsonType.STRING, BsonType.BOOLEAN, BsonType.NULL,
            BsonType.INT32, BsonType.INT64, BsonType.DOUBLE, BsonType.DECIMAL128, BsonType.DATE_TIME,
            BsonType.OBJECT_ID, BsonType.BINARY, BsonType.DOCUMENT, BsonType.ARRAY));
    /** The types that read back as themselves from plain JSON: a value made only of these needs no newer envelope. */
    private static final Set<BsonType> PLAIN = Set.copyOf(EnumSet.of(BsonType.STRING, BsonType.BOOLEAN, BsonType.NULL,
            BsonType.INT32, BsonType.DOUBLE, BsonType.DOCUMENT, BsonType.ARRAY));
    private static final String CARRIED_NAMES = "string, boolean, null, Int32, Int64, Double, Decimal128, date,"
            + " ObjectId, binary, document or array";

    private static final JsonWriterSettings WRITING = JsonWriterSettings.builder()
            .outputMode(JsonMode.RELAXED)
            .int64Converter((value, writer) -> {
                writer.writeStartObject();
                writer.writeString("$numberLong", Long.toString(value));
                writer.writeEndObject();
            })
            .build();
    /** {@code {"v": } and its closing brace around a value written alone. */
    private static final String WRAP_NAME = "v";

    private ExtendedJson() {
    }

    /**
     * {@code value} as Extended JSON text.
     *
     * @param what where the value is, for a refusal ({@code "the value of 'placedAt'"})
     * @throws InvalidInputException if it holds a type the envelope does not carry, naming the type and where
     */
    static String write(BsonValue value, String what) {
        refuseUncarried(value, what);
        refuseDollarNames(value, "", what);
        String json = new BsonDocument(WRAP_NAME, value).toJson(WRITING);
        // {"v": <value>}: the writer puts exactly one space after the name's colon
        return json.substring(WRAP_NAME.length() + 5, json.length() - 1);
    }

    /**
     * The value a JSON tree holds, read as Extended JSON.
     *
     * @param node the tree (already read by the envelope)
     * @param what where the value is, for a refusal
     * @throws InvalidInputException if a plain number cannot be held exactly (a whole number past 64 bits, a number
     *                               past a double's range), a wrapper is malformed, or a type is not carried
     */
    static BsonValue read(JsonNode node, String what) {
        refuseInexactNumbers(node, what);
        BsonValue value;
        try {
            value = BsonDocument.parse("{\"" + WRAP_NAME + "\": " + node + "}").get(WRAP_NAME);
        } catch (JsonParseException | IllegalArgumentException e) {   // a bad number, ObjectId, base64...
            throw new InvalidInputException(what + " is not MongoDB Extended JSON: " + Envelope.clip(firstLine(e)));
        }
        refuseUncarried(value, what);
        return value;
    }

    /** Whether {@code value} holds a type that plain JSON cannot say, so that it needs envelope version 3. */
    static boolean needsTypes(BsonValue value) {
        if (!PLAIN.contains(value.getBsonType())) {
            return true;
        }
        if (value.isDouble()) {
            return !Double.isFinite(value.asDouble().getValue());   // NaN and the infinities travel as $numberDouble
        }
        if (value.isArray()) {
            return value.asArray().stream().anyMatch(ExtendedJson::needsTypes);
        }
        return value.isDocument() && value.asDocument().values().stream().anyMatch(ExtendedJson::needsTypes);
    }

    /**
     * A document name starting with {@code $} (which MongoDB refuses in stored data) would be read back as a type's
     * wrapper ({@code {"$numberLong": "5"}} as a 64-bit 5): refused where it is, rather than sent as another value.
     */
    private static void refuseDollarNames(BsonValue value, String path, String what) {
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> member : value.asDocument().entrySet()) {
                String at = join(path, member.getKey());
                if (member.getKey().startsWith("$")) {
                    throw new InvalidInputException(what + " (at '" + Envelope.clip(at) + "') has a name starting"
                            + " with '$', which MongoDB refuses in data and Extended JSON would read as a type");
                }
                refuseDollarNames(member.getValue(), at, what);
            }
        } else if (value.isArray()) {
            for (int i = 0; i < value.asArray().size(); i++) {
                refuseDollarNames(value.asArray().get(i), join(path, Integer.toString(i)), what);
            }
        }
    }

    private static void refuseUncarried(BsonValue value, String what) {
        firstUncarried(value, "").ifPresent(found -> {
            throw new InvalidInputException(what + (found.path().isEmpty() ? "" : " (at '" + Envelope.clip(found.path())
                    + "')") + " is a BSON " + found.type().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')
                    + ", which the envelope does not carry (it carries " + CARRIED_NAMES + ")");
        });
    }

    /** A value of a type not carried, and its path inside the value ({@code ""} for the value itself). */
    private record Uncarried(String path, BsonType type) {
    }

    private static Optional<Uncarried> firstUncarried(BsonValue value, String path) {
        if (!CARRIED.contains(value.getBsonType())) {
            return Optional.of(new Uncarried(path, value.getBsonType()));
        }
        if (value.isArray()) {
            for (int i = 0; i < value.asArray().size(); i++) {
                Optional<Uncarried> found = firstUncarried(value.asArray().get(i), join(path, Integer.toString(i)));
                if (found.isPresent()) {
                    return found;
                }
            }
        } else if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> member : value.asDocument().entrySet()) {
                Optional<Uncarried> found = firstUncarried(member.getValue(), join(path, member.getKey()));
                if (found.isPresent()) {
                    return found;
                }
            }
        }
        return Optional.empty();
    }

    private static String join(String path, String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    /** A plain number the reader would round or make infinite: refused, with what to send instead. */
    private static void refuseInexactNumbers(JsonNode node, String what) {
        if (node.isIntegralNumber() && !node.canConvertToLong()) {
            throw new InvalidInputException(what + ": the integer " + Envelope.clip(node.asText()) + " does not fit"
                    + " in 64 bits; send it as {\"$numberDecimal\": \"...\"} or as a string");
        }
        if (node.isNumber() && !node.isIntegralNumber() && !Double.isFinite(node.doubleValue())) {
            throw new InvalidInputException(what + ": the number " + Envelope.clip(node.asText()) + " is out of the"
                    + " range of a double; send it as {\"$numberDecimal\": \"...\"} or as a string");
        }
        node.forEach(child -> refuseInexactNumbers(child, what));
    }

    private static String firstLine(Exception e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return message.lines().findFirst().orElse("");
    }
}
