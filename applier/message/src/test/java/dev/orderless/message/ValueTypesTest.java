package dev.orderless.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import dev.orderless.InvalidInputException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.Outcome;
import dev.orderless.apply.SetField;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.PropertyCheck;
import dev.orderless.testing.RandomBson;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonJavaScript;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Values keep their BSON type and value from the producer's envelope to the stored document. */
@ExtendWith(MongoExtension.class)
class ValueTypesTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().register("value")
            .set(SetField.of("items", "k")).build();
    private final Envelope envelope = new Envelope();
    private final AtomicInteger entities = new AtomicInteger();

    @Test
    void every_bson_value_reads_back_from_its_envelope_with_its_type_as_a_value_and_as_an_attribute() {
        PropertyCheck.forAll("a value through encode and decode", 300, random -> {
            RandomBson values = RandomBson.from(random);
            List<BsonValue> drawn = new ArrayList<>();
            RandomBson.TYPES.forEach(type -> drawn.add(values.value(type)));   // every type, every try
            for (int i = random.nextInt(8); i > 0; i--) {
                drawn.add(values.value());
            }
            return drawn;
        }).check((drawn, seed) -> {
            for (BsonValue value : drawn) {
                Operation assign = Operation.assign("e", 1, "value", value);
                Operation add = Operation.add("e", 2, "items", "x", new BsonDocument("a", value));
                assertThat(envelope.decode(envelope.encode(assign))).as("%s", value).isEqualTo(assign);
                assertThat(envelope.decode(envelope.encode(add))).as("%s", value).isEqualTo(add);
            }
        });
    }

    @Test
    void every_bson_value_is_stored_with_the_type_and_value_it_was_sent_with(MongoDatabase db, MongoBackend backend) {
        MongoCollection<BsonDocument> collection = db.getCollection("typed", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(collection, SCHEMA);
        PropertyCheck.forAll("a value through producer, consumer and MongoDB", 40, random -> {
            RandomBson values = RandomBson.from(random).storableOn(backend);
            List<BsonValue> drawn = new ArrayList<>();
            RandomBson.TYPES.forEach(type -> drawn.add(values.value(type)));
            return drawn;
        }).check((drawn, seed) -> {
            for (BsonValue value : drawn) {
                String entity = "e" + entities.incrementAndGet();
                byte[] assign = envelope.encode(Operation.assign(entity, 1, "value", value));
                byte[] add = envelope.encode(Operation.add(entity, 2, "items", "x", new BsonDocument("a", value)));

                assertThat(applier.apply(envelope.decode(assign))).isEqualTo(Outcome.APPLIED);
                assertThat(applier.apply(envelope.decode(add))).isEqualTo(Outcome.APPLIED);

                BsonDocument stored = collection.find(Filters.eq("_id", entity)).first();
                assertThat(stored.get("value")).as("the register, sent as %s", value).isEqualTo(value);
                assertThat(stored.get("value").getBsonType()).isEqualTo(value.getBsonType());
                BsonDocument entry = stored.getArray("items").get(0).asDocument();
                assertThat(entry.get("a")).as("the attribute, sent as %s", value).isEqualTo(value);
            }
        });
    }

    @Test
    void a_value_assigned_over_an_equal_number_of_another_type_is_stored_with_its_own_type(MongoDatabase db) {
        MongoCollection<BsonDocument> collection = db.getCollection("typed", BsonDocument.class);
        GuardedApplier applier = GuardedApplier.create(collection, SCHEMA);
        applier.apply(envelope.decode(envelope.encode(Operation.assign("e", 1, "value", new BsonInt32(5)))));

        applier.apply(envelope.decode(envelope.encode(Operation.assign("e", 2, "value", new BsonInt64(5)))));

        assertThat(collection.find(Filters.eq("_id", "e")).first().get("value")).isEqualTo(new BsonInt64(5));
    }

    @Test
    void a_64_bit_integer_that_fits_32_bits_stays_64_bits() {
        Operation op = Operation.add("order-1", 1, "lines", "sku-1", new BsonDocument("quantity", new BsonInt64(2)));

        String json = new String(envelope.encode(op), StandardCharsets.UTF_8);

        assertThat(json).contains("\"quantity\":{\"$numberLong\":\"2\"}").startsWith("{\"v\":3,");
        assertThat(((Operation.Add) envelope.decode(json.getBytes(StandardCharsets.UTF_8))).attrs().get("quantity"))
                .isEqualTo(new BsonInt64(2));
    }

    @Test
    void a_value_plain_json_can_type_is_written_as_version_1_wrote_it() {
        BsonDocument plain = new BsonDocument("title", new BsonString("Intro")).append("credits", new BsonInt32(4))
                .append("weight", new BsonDouble(0.5));

        String json = new String(envelope.encode(Operation.add("s", 1, "classes", "CS 101", plain)),
                StandardCharsets.UTF_8);

        assertThat(json).isEqualTo("{\"entity\":\"s\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\","
                + "\"element\":\"CS 101\",\"attrs\":{\"title\":\"Intro\",\"credits\":4,\"weight\":0.5}}");
    }

    @Test
    void a_message_written_by_hand_in_another_language_reads_with_its_types() {
        // what docs/guide/wiring.md shows a Node or Python producer writing
        Operation op = decode("{\"v\":3,\"entity\":\"order-9\",\"seq\":{\"$numberLong\":\"9007199254740993\"},"
                + "\"op\":\"add\",\"field\":\"lines\",\"element\":\"sku-3\",\"attrs\":{"
                + "\"price\":{\"$numberDecimal\":\"19.99\"},\"addedAt\":{\"$date\":\"2026-11-29T10:15:00Z\"},"
                + "\"quantity\":{\"$numberLong\":\"2\"},\"note\":\"gift\"}}");

        assertThat(op.seq()).as("a seq past 2^53, which a JavaScript number cannot hold").isEqualTo(9007199254740993L);
        BsonDocument attrs = ((Operation.Add) op).attrs();
        assertThat(attrs.get("price")).isEqualTo(new BsonDecimal128(Decimal128.parse("19.99")));
        assertThat(attrs.get("addedAt")).isEqualTo(new BsonDateTime(1_795_947_300_000L));
        assertThat(attrs.get("quantity")).isEqualTo(new BsonInt64(2));
        assertThat(attrs.get("note")).isEqualTo(new BsonString("gift"));
    }

    @Test
    void todays_plain_json_values_read_as_before() {
        BsonValue value = ((Operation.Assign) decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"assign\",\"field\":\"v\","
                + "\"value\":{\"small\":5,\"big\":5000000000,\"half\":1.5,\"whole\":2.0,\"none\":null,\"list\":[true]}}"))
                .value();

        assertThat(value.asDocument().get("small")).isEqualTo(new BsonInt32(5));
        assertThat(value.asDocument().get("big")).isEqualTo(new BsonInt64(5_000_000_000L));
        assertThat(value.asDocument().get("half")).isEqualTo(new BsonDouble(1.5));
        assertThat(value.asDocument().get("whole")).isEqualTo(new BsonDouble(2.0));
    }

    @Test
    void a_delta_may_be_given_as_a_64_bit_integer_in_its_extended_form() {
        assertThat(decode("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"increment\",\"field\":\"cents\","
                + "\"delta\":{\"$numberLong\":\"-9223372036854775808\"}}"))
                .isEqualTo(Operation.increment("e", 1, "cents", Long.MIN_VALUE));
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":{\"$numberLong\":\"x\"},\"op\":\"delete\"}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("'seq' must be a whole number, was {\"$numberLong\":\"x\"} (entity 'e')");
    }

    @Test
    void the_producer_refuses_a_type_the_envelope_does_not_carry_naming_the_type_the_field_and_the_operation() {
        assertThatThrownBy(() -> envelope.encode(Operation.assign("order-1", 4, "placedAt", new BsonTimestamp(1, 1))))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("the value of 'placedAt' is a BSON timestamp, which the envelope does not"
                        + " carry (it carries string, boolean, null, Int32, Int64, Double,")
                .hasMessageEndingWith("(entity 'order-1', seq 4)");
        assertThatThrownBy(() -> envelope.encode(Operation.add("order-1", 5, "lines", "sku-1",
                new BsonDocument("meta", new BsonDocument("pattern", new BsonRegularExpression("^a"))))))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("the attributes of 'sku-1' in 'lines' (at 'meta.pattern') is a BSON regular"
                        + " expression, which the envelope does not carry")
                .hasMessageEndingWith("(entity 'order-1', seq 5)");
        assertThatThrownBy(() -> envelope.encode(Operation.assign("e", 1, "v",
                new org.bson.BsonArray(List.of(new BsonJavaScript("x()"))))))
                .hasMessageContaining("(at '0') is a BSON javascript");
    }

    @Test
    void the_consumer_refuses_a_type_the_envelope_does_not_carry_as_bad_input() {
        assertThatThrownBy(() -> decode("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"assign\",\"field\":\"at\","
                + "\"value\":{\"$timestamp\":{\"t\":1,\"i\":1}}}"))
                .isInstanceOf(InvalidInputException.class).isNotInstanceOf(UnsupportedEnvelopeException.class)
                .hasMessageStartingWith("the value of 'at' is a BSON timestamp, which the envelope does not carry")
                .hasMessageEndingWith("(entity 'e', seq 1)");
    }

    @Test
    void a_malformed_wrapper_is_refused_as_bad_input_naming_where_it_is() {
        assertThatThrownBy(() -> decode("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"assign\",\"field\":\"n\","
                + "\"value\":{\"$numberLong\":\"abc\"}}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("the value of 'n' is not MongoDB Extended JSON: ")
                .hasMessageEndingWith("(entity 'e', seq 1)");
        assertThatThrownBy(() -> decode("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"add\",\"field\":\"c\","
                + "\"element\":\"x\",\"attrs\":{\"$date\":\"2026-11-29T10:15:00Z\"}}"))
                .hasMessage("'attrs' must be an object of attributes, was a BSON date time (entity 'e', seq 1)");
    }

    @Test
    void a_document_named_like_a_wrapper_is_refused_at_the_producer_not_sent_as_another_value() {
        // {"$numberLong": "5"} as a document would reach the consumer as a 64-bit 5 (found by review)
        assertThatThrownBy(() -> envelope.encode(Operation.assign("e", 1, "value",
                new BsonDocument("a", new BsonDocument("$numberLong", new BsonString("5"))))))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("the value of 'value' (at 'a.$numberLong') has a name starting with '$'")
                .hasMessageEndingWith("(entity 'e', seq 1)");
    }

    @Test
    void a_malformed_object_id_or_base64_is_bad_input_naming_where_it_is() {
        assertThatThrownBy(() -> decode("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"assign\",\"field\":\"x\","
                + "\"value\":{\"$oid\":\"zz\"}}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("the value of 'x' is not MongoDB Extended JSON: ");
        assertThatThrownBy(() -> decode("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"add\",\"field\":\"x\","
                + "\"element\":\"k\",\"attrs\":{\"b\":{\"$binary\":{\"base64\":\"!!!!\",\"subType\":\"00\"}}}}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("'attrs' is not MongoDB Extended JSON: ");
    }

    @Test
    void every_type_a_document_holds_is_one_the_envelope_carries() {
        assertThat(RandomBson.TYPES).containsExactlyInAnyOrderElementsOf(ExtendedJson.CARRIED);
        assertThat(ExtendedJson.CARRIED).doesNotContain(BsonType.TIMESTAMP, BsonType.JAVASCRIPT, BsonType.MIN_KEY);
    }

    private Operation decode(String json) {
        return envelope.decode(json.getBytes(StandardCharsets.UTF_8));
    }
}
