package dev.orderless.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.InvalidInputException;
import dev.orderless.apply.Operation;
import java.nio.charset.StandardCharsets;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** Review of issue 50: envelope edges. */
class ReviewEnvelopeTest {
    private final Envelope envelope = new Envelope();

    @Test
    void a_document_value_spelt_like_a_wrapper_is_refused_at_the_producer_not_turned_into_another_value() {
        // a document whose only name is "$numberLong": MongoDB and the applier refuse a nested name starting with '$'
        Operation op = Operation.assign("e", 1, "value", new BsonDocument("$numberLong", new BsonString("5")));

        byte[] body;
        try {
            body = envelope.encode(op);
        } catch (InvalidInputException refused) {
            return;   // what it should do
        }
        System.out.println("ENCODED " + new String(body, StandardCharsets.UTF_8) + " -> " + envelope.decode(body));
        assertThat(envelope.decode(body)).as("what the consumer reads from the producer's own envelope").isEqualTo(op);
    }

    @Test
    void a_malformed_object_id_or_base64_is_bad_input_naming_where_it_is() {
        assertThatThrownBy(() -> envelope.decode(("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"assign\",\"field\":\"x\","
                + "\"value\":{\"$oid\":\"zz\"}}").getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("the value of 'x'");
        assertThatThrownBy(() -> envelope.decode(("{\"v\":3,\"entity\":\"e\",\"seq\":1,\"op\":\"add\",\"field\":\"x\","
                + "\"element\":\"k\",\"attrs\":{\"b\":{\"$binary\":{\"base64\":\"!!!!\",\"subType\":\"00\"}}}}")
                .getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("'attrs'");
    }
}
