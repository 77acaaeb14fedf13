package dev.orderless.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;

/** The delete's kill rule compares a stored seq with a long exactly as MongoDB's {@code $gte} does. */
class StoredTest {
    private static boolean atLeast(BsonValue seq, long than) {
        return Stored.seqAtLeast(new BsonDocument("name", new BsonString("e")).append("seq", seq), than);
    }

    @Test
    void every_numeric_type_compares_by_value() {
        assertThat(atLeast(new BsonInt32(5), 5)).isTrue();
        assertThat(atLeast(new BsonInt64(4), 5)).isFalse();
        assertThat(atLeast(new BsonDouble(4.5), 5)).isFalse();
        assertThat(atLeast(new BsonDecimal128(Decimal128.parse("5.0")), 5)).isTrue();
    }

    @Test
    void a_double_past_two_to_the_53_compares_exactly_not_rounded() {
        assertThat(atLeast(new BsonDouble(9007199254740992.0), 9007199254740993L)).isFalse();
    }

    @Test
    void nan_negative_zero_and_negative_infinity_are_below_and_positive_infinity_above() {
        assertThat(atLeast(new BsonDouble(Double.NaN), 1)).isFalse();
        assertThat(atLeast(new BsonDecimal128(Decimal128.NEGATIVE_ZERO), 1)).isFalse();
        assertThat(atLeast(new BsonDecimal128(Decimal128.NEGATIVE_INFINITY), 1)).isFalse();
        assertThat(atLeast(new BsonDouble(Double.POSITIVE_INFINITY), 1)).isTrue();
    }

    @Test
    void an_array_counts_if_any_element_is_at_or_above_and_a_string_never() {
        assertThat(atLeast(new BsonArray(List.of(new BsonInt64(1), new BsonInt64(9))), 5)).isTrue();
        assertThat(atLeast(new BsonArray(List.of(new BsonInt64(1), new BsonInt64(2))), 5)).isFalse();
        assertThat(atLeast(new BsonString("9"), 5)).isFalse();
    }
}
