package dev.orderless.testing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

/**
 * Random BSON values of every type a document's data holds (Int32, Int64, Double, Decimal128, date, ObjectId,
 * binary, string, boolean, null, documents and arrays), for property tests of anything that must keep a value's
 * type and value exactly. Each type is drawn with its edges: the ends of the integer ranges, small 64-bit integers
 * that fit 32 bits, {@code -0.0}, NaN and the infinities, decimals with trailing zeros, dates before 1970 and
 * after 9999, every common binary subtype, strings beyond the Basic Multilingual Plane and strings that look like
 * Extended JSON. Names in documents never start with {@code $} nor contain {@code .} (MongoDB refuses them in data).
 */
public final class RandomBson {
    /** The types {@link #value} draws from, at the top level. */
    public static final List<org.bson.BsonType> TYPES = List.of(org.bson.BsonType.INT32, org.bson.BsonType.INT64,
            org.bson.BsonType.DOUBLE, org.bson.BsonType.DECIMAL128, org.bson.BsonType.DATE_TIME,
            org.bson.BsonType.OBJECT_ID, org.bson.BsonType.BINARY, org.bson.BsonType.STRING, org.bson.BsonType.BOOLEAN,
            org.bson.BsonType.NULL, org.bson.BsonType.DOCUMENT, org.bson.BsonType.ARRAY);

    private final Random random;
    private final boolean everyBinarySubtype;

    private RandomBson(Random random, boolean everyBinarySubtype) {
        this.random = random;
        this.everyBinarySubtype = everyBinarySubtype;
    }

    /**
     * Values drawn from {@code random}.
     *
     * @param random the source; the same seed gives the same values
     * @return the generator
     */
    public static RandomBson from(Random random) {
        return new RandomBson(random, true);
    }

    /**
     * These values, but only such as {@code backend} stores: on a backend that declares
     * {@link dev.orderless.backends.KnownDifference#BINARY_SUBTYPES_LIMITED}, binary data of the subtypes it keeps.
     *
     * @param backend the MongoDB the values will be stored on
     * @return a generator drawing from the same source
     */
    public RandomBson storableOn(dev.orderless.backends.MongoBackend backend) {
        return new RandomBson(random, !backend.knownDifferences()
                .contains(dev.orderless.backends.KnownDifference.BINARY_SUBTYPES_LIMITED));
    }

    /**
     * A value of a type drawn from {@link #TYPES}; documents and arrays nest at most three levels.
     *
     * @return the value
     */
    public BsonValue value() {
        return value(TYPES.get(random.nextInt(TYPES.size())), 3);
    }

    /**
     * A value of {@code type}.
     *
     * @param type one of {@link #TYPES}
     * @return the value
     */
    public BsonValue value(org.bson.BsonType type) {
        return value(type, 3);
    }

    private BsonValue value(org.bson.BsonType type, int depth) {
        return switch (type) {
            case INT32 -> new BsonInt32(pick(Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1, 1, random.nextInt()));
            case INT64 -> new BsonInt64(pick(Long.MIN_VALUE, Long.MAX_VALUE, 0L, 7L, -7L, (long) Integer.MAX_VALUE + 1,
                    (long) random.nextInt(1000), random.nextLong()));
            case DOUBLE -> new BsonDouble(pick(-0.0, 0.0, 2.0, 0.1, Double.NaN, Double.POSITIVE_INFINITY,
                    Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE, 1e300, random.nextGaussian() * 1e6));
            case DECIMAL128 -> new BsonDecimal128(pick(Decimal128.parse("19.99"), Decimal128.parse("1.10"),
                    Decimal128.parse("-0"), Decimal128.parse("0E-6176"), Decimal128.NaN, Decimal128.POSITIVE_INFINITY,
                    Decimal128.NEGATIVE_INFINITY, Decimal128.parse("9999999999999999999999999999999999E+6111"),
                    new Decimal128(new BigDecimal(new BigInteger(100, random), random.nextInt(30) - 10))));
            case DATE_TIME -> new BsonDateTime(pick(0L, -1L, 1_795_946_400_000L, -62_135_596_800_000L,
                    253_402_300_800_000L, random.nextLong() % 4_000_000_000_000L));
            case OBJECT_ID -> new BsonObjectId(new ObjectId());
            case BINARY -> binary();
            case STRING -> new BsonString(pick("", "Ada", "Zoë 𝄞 日本", "{\"$date\": 1}", "{\"$numberLong\": \"5\"}",
                    "1.0", "null", "line\nbreak\ttab \"quoted\" \\ back", "x".repeat(random.nextInt(300))));
            case BOOLEAN -> BsonBoolean.valueOf(random.nextBoolean());
            case NULL -> BsonNull.VALUE;
            case DOCUMENT -> depth <= 0 ? new BsonInt32(random.nextInt()) : document(depth - 1);
            case ARRAY -> depth <= 0 ? new BsonString("leaf") : array(depth - 1);
            default -> throw new IllegalArgumentException("not a type RandomBson draws: " + type);
        };
    }

    private BsonDocument document(int depth) {
        BsonDocument document = new BsonDocument();
        int members = random.nextInt(5);
        for (int i = 0; i < members; i++) {
            document.put(pick("a", "quantity", "price", "at", "Zoë", "n" + i, "v"), value(randomType(), depth));
        }
        return document;
    }

    private BsonArray array(int depth) {
        BsonArray array = new BsonArray();
        int items = random.nextInt(4);
        for (int i = 0; i < items; i++) {
            array.add(value(randomType(), depth));
        }
        return array;
    }

    private org.bson.BsonType randomType() {
        return TYPES.get(random.nextInt(TYPES.size()));
    }

    private BsonBinary binary() {
        byte[] bytes = new byte[random.nextInt(20)];
        random.nextBytes(bytes);
        return switch (random.nextInt(everyBinarySubtype ? 5 : 3)) {
            case 0 -> new BsonBinary(bytes);
            case 1 -> new BsonBinary(new UUID(random.nextLong(), random.nextLong()),
                    org.bson.UuidRepresentation.STANDARD);
            case 2 -> new BsonBinary(BsonBinarySubType.UUID_LEGACY, new byte[16]);
            case 3 -> new BsonBinary(BsonBinarySubType.MD5, new byte[16]);
            default -> new BsonBinary((byte) 0x80, bytes);
        };
    }

    @SafeVarargs
    private <T> T pick(T... choices) {
        return choices[random.nextInt(choices.length)];
    }
}
