package dev.orderless.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.InvalidInputException;
import dev.orderless.apply.Operation;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

class EnvelopeTest {
    private final Envelope envelope = new Envelope();

    @Test
    void the_four_canonical_examples_decode_to_their_operations() {
        assertThat(decode("{\"entity\":\"student-17\",\"seq\":1042,\"op\":\"add\",\"field\":\"classes\",\"element\":\"CS 101\",\"attrs\":{\"title\":\"Intro\"}}"))
                .isEqualTo(Operation.add("student-17", 1042, "classes", "CS 101", new BsonDocument("title", new BsonString("Intro"))));
        assertThat(decode("{\"entity\":\"student-17\",\"seq\":1043,\"op\":\"remove\",\"field\":\"classes\",\"element\":\"CS 101\"}"))
                .isEqualTo(Operation.remove("student-17", 1043, "classes", "CS 101"));
        assertThat(decode("{\"entity\":\"student-17\",\"seq\":1044,\"op\":\"assign\",\"field\":\"name\",\"value\":\"Ada\"}"))
                .isEqualTo(Operation.assign("student-17", 1044, "name", new BsonString("Ada")));
        assertThat(decode("{\"entity\":\"student-17\",\"seq\":1045,\"op\":\"delete\"}"))
                .isEqualTo(Operation.delete("student-17", 1045));
    }

    @Test
    void encoding_then_decoding_gives_the_same_operation() {
        BsonDocument nested = new BsonDocument("n", new BsonInt32(1)).append("big", new BsonInt64(1L << 40))
                .append("f", new BsonDouble(1.5)).append("ok", BsonBoolean.TRUE)
                .append("list", new BsonArray(List.of(new BsonString("a"), new BsonInt32(2))));
        for (Operation op : List.of(
                Operation.add("e", 1, "classes", "CS 101", nested),
                Operation.add("e", 2, "classes", "CS 101"),
                Operation.remove("e", 3, "classes", "CS 101"),
                Operation.assign("e", 4, "name", nested),
                Operation.assign("e", 5, "name", new BsonString("Ada")),
                Operation.delete("e", Long.MAX_VALUE))) {
            assertThat(envelope.decode(envelope.encode(op))).isEqualTo(op);
        }
    }

    @Test
    void a_huge_seq_is_read_exactly() {
        assertThat(decode("{\"entity\":\"e\",\"seq\":9007199254740993,\"op\":\"delete\"}").seq()).isEqualTo(9007199254740993L);
    }

    @Test
    void a_seq_beyond_a_long_is_refused() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":99999999999999999999,\"op\":\"delete\"}"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("'seq' must be a whole number");
    }

    @Test
    void a_value_integer_beyond_64_bits_is_refused_not_truncated() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"assign\",\"field\":\"n\","
                + "\"value\":123456789012345678901234567890}"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("does not fit in 64 bits");
    }

    @Test
    void a_value_number_beyond_a_double_is_refused() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"add\",\"field\":\"c\","
                + "\"element\":\"x\",\"attrs\":{\"n\":1e400}}"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("out of the range of a double");
    }

    @Test
    void invalid_utf8_is_refused_as_not_json() {
        byte[] body = {'{', '"', 'e', 'n', 't', 'i', 't', 'y', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
        assertThatThrownBy(() -> envelope.decode(body))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("not JSON");
    }

    @Test
    void a_duplicated_member_is_refused_by_its_name_with_the_subject() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"op\":\"delete\",\"seq\":1,\"seq\":2}"))
                .isInstanceOf(InvalidInputException.class)
                .as("a member given twice names neither of its values")
                .hasMessage("member 'seq' appears twice (entity 'e')");
    }

    @Test
    void trailing_content_is_refused_with_the_subject() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"delete\"} {}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("not JSON: more follows the object (entity 'e', seq 1)");
    }

    @Test
    void reasons_stay_on_one_short_line() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"" + "x".repeat(500) + "\"}"))
                .isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(((InvalidInputException) e).reason()).hasSizeLessThan(160).doesNotContain("\n"));
    }

    @Test
    void a_typed_message_maps_to_its_operation() {
        record Enrolled(String studentId, long sequence, String course) {
        }
        OperationDecoder decoder = TypedDecoder.of(Enrolled.class,
                e -> Operation.add(e.studentId(), e.sequence(), "classes", e.course()));

        assertThat(decoder.decode("{\"studentId\":\"s1\",\"sequence\":7,\"course\":\"CS 101\"}".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(Operation.add("s1", 7, "classes", "CS 101"));
        assertThatThrownBy(() -> decoder.decode("nope".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(InvalidInputException.class).hasMessageStartingWith("not a Enrolled:");
        assertThatThrownBy(() -> decoder.decode("{\"studentId\":\"s1\",\"sequence\":0,\"course\":\"x\"}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("seq must be positive");
    }

    private Operation decode(String json) {
        return envelope.decode(json.getBytes(StandardCharsets.UTF_8));
    }

    // the envelope's rules: producers evolve first

    @Test
    void a_member_the_envelope_does_not_define_is_ignored_and_counted() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        Envelope counting = new Envelope().withMeters(meters);

        Operation op = counting.decode(bytes("{\"entity\":\"e\",\"seq\":7,\"op\":\"delete\",\"priority\":\"high\"}"));

        assertThat(op).isEqualTo(Operation.delete("e", 7));
        assertThat(meters.get("orderless.envelope.ignored_members").tag("member", "priority").counter().count())
                .as("counted under the member's name").isEqualTo(1);
    }

    @Test
    void ignored_members_past_the_first_names_are_counted_under_one_tag() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        Envelope counting = new Envelope().withMeters(meters);

        for (int i = 0; i < Envelope.NAMES_TAGGED + 10; i++) {
            counting.decode(bytes("{\"entity\":\"e\",\"seq\":7,\"op\":\"delete\",\"x" + i + "\":1}"));
        }

        assertThat(meters.get("orderless.envelope.ignored_members").counters()).as("one meter per name, then one more")
                .hasSize(Envelope.NAMES_TAGGED + 1);
        assertThat(meters.get("orderless.envelope.ignored_members").tag("member", Envelope.OTHER_MEMBERS).counter()
                .count()).isEqualTo(10);
    }

    @Test
    void a_strict_envelope_refuses_a_member_it_does_not_define_as_unsupported_naming_the_member_and_the_entity() {
        Envelope strict = new Envelope().withUnknownMembers(Envelope.UnknownMembers.REFUSE);

        assertThatThrownBy(() -> strict.decode(bytes("{\"entity\":\"e\",\"seq\":7,\"op\":\"delete\",\"priority\":\"high\"}")))
                .isInstanceOf(UnsupportedEnvelopeException.class)
                .hasMessageStartingWith("unknown member 'priority'")
                .hasMessageEndingWith("(entity 'e', seq 7)");
    }

    @Test
    void meta_is_carried_and_never_read_even_by_a_strict_envelope() {
        Envelope strict = new Envelope().withUnknownMembers(Envelope.UnknownMembers.REFUSE);

        assertThat(strict.decode(bytes("{\"entity\":\"e\",\"seq\":7,\"op\":\"delete\",\"meta\":{\"trace\":[1,{\"x\":null}]}}")))
                .isEqualTo(Operation.delete("e", 7));
    }

    @Test
    void version_1_is_read_and_a_newer_version_is_refused_as_unsupported() {
        assertThat(decode("{\"v\":1,\"entity\":\"e\",\"seq\":7,\"op\":\"delete\"}")).isEqualTo(Operation.delete("e", 7));
        assertThatThrownBy(() -> decode("{\"v\":4,\"entity\":\"e\",\"seq\":7,\"op\":\"delete\"}"))
                .isInstanceOf(UnsupportedEnvelopeException.class)
                .hasMessage("envelope version 4 is not one this consumer reads (it reads 1 to 3): upgrade it, then replay"
                        + " (entity 'e', seq 7)");
        assertThatThrownBy(() -> decode("{\"v\":\"1\",\"entity\":\"e\",\"seq\":7,\"op\":\"delete\"}"))
                .isInstanceOf(InvalidInputException.class).isNotInstanceOf(UnsupportedEnvelopeException.class)
                .hasMessageStartingWith("'v' (the envelope version) must be a positive whole number");
    }

    @Test
    void a_version_no_consumer_could_read_is_bad_input_not_unsupported() {
        for (String v : List.of("0", "-1", "2.0", "null")) {
            assertThatThrownBy(() -> decode("{\"v\":" + v + ",\"entity\":\"e\",\"seq\":7,\"op\":\"delete\"}"))
                    .as("v %s", v)
                    .isInstanceOf(InvalidInputException.class).isNotInstanceOf(UnsupportedEnvelopeException.class)
                    .hasMessage("'v' (the envelope version) must be a positive whole number, was " + v
                            + " (entity 'e', seq 7)");
        }
    }

    @Test
    void an_add_whose_attrs_are_misspelt_is_refused_not_written_without_them() {
        for (String name : List.of("atrs", "Attrs", "attributes", "attr")) {
            assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\","
                    + "\"element\":\"x\",\"" + name + "\":{\"title\":\"Intro\"}}"))
                    .as(name)
                    .isInstanceOf(InvalidInputException.class).isNotInstanceOf(UnsupportedEnvelopeException.class)
                    .hasMessage("unknown member '" + name + "' beside an add without 'attrs': a misspelt 'attrs'?"
                            + " (refused, so that its attributes are not lost) (entity 'e', seq 1)");
        }
        assertThat(decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\",\"element\":\"x\","
                + "\"attrs\":{\"title\":\"Intro\"},\"atrs\":1}"))
                .as("beside attrs itself, a member spelt like it is just another member")
                .isEqualTo(Operation.add("e", 1, "classes", "x", new BsonDocument("title", new BsonString("Intro"))));
    }

    @Test
    void a_strict_envelope_refuses_a_misspelt_member_of_the_operation_as_bad_input_by_the_name_it_lacks() {
        Envelope strict = new Envelope().withUnknownMembers(Envelope.UnknownMembers.REFUSE);

        assertThatThrownBy(() -> strict.decode(bytes("{\"entity\":\"e\",\"sequence\":1,\"op\":\"delete\"}")))
                .isInstanceOf(InvalidInputException.class).isNotInstanceOf(UnsupportedEnvelopeException.class)
                .hasMessageStartingWith("missing 'seq' (it has 'sequence'");
    }

    @Test
    void an_increment_is_version_2_and_reads_back_as_itself() {
        Operation increment = Operation.increment("student-17", 1046, "credits", -4);

        String json = new String(envelope.encode(increment), StandardCharsets.UTF_8);

        assertThat(json).as("version first, so a consumer that reads only version 1 refuses it replayably")
                .isEqualTo("{\"v\":2,\"entity\":\"student-17\",\"seq\":1046,\"op\":\"increment\",\"field\":\"credits\","
                        + "\"delta\":-4}");
        assertThat(decode(json)).isEqualTo(increment);
        assertThat(new String(envelope.encode(Operation.delete("e", 1)), StandardCharsets.UTF_8))
                .as("every other op is written as version 1 wrote it").doesNotContain("\"v\"");
    }

    @Test
    void an_increment_without_a_whole_delta_is_refused_by_name() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"increment\",\"field\":\"credits\"}"))
                .isInstanceOf(InvalidInputException.class).hasMessage("increment without 'delta' (entity 'e', seq 1)");
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"increment\",\"field\":\"credits\","
                + "\"delta\":1.5}"))
                .hasMessage("'delta' must be a whole number (a 64-bit one), was 1.5 (entity 'e', seq 1)");
    }

    @Test
    void a_refusal_names_its_subject_once() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":1,\"op\":\"add\",\"field\":\"classes\","
                + "\"element\":\"\"}"))
                .hasMessage("element is missing (entity 'e', seq 1)");
    }

    @Test
    void a_misspelt_required_member_is_refused_by_name_with_the_member_the_message_has_instead() {
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"sequence\":7,\"op\":\"delete\"}"))
                .isInstanceOf(InvalidInputException.class).isNotInstanceOf(UnsupportedEnvelopeException.class)
                .hasMessage("missing 'seq' (it has 'sequence', which envelope 3 does not define) (entity 'e')");
    }

    @Test
    void every_refusal_names_the_entity_and_seq_where_the_message_holds_them() {
        assertThatThrownBy(() -> decode("{\"entity\":\"student-17\",\"op\":\"delete\"}"))
                .hasMessage("missing 'seq' (entity 'student-17')");
        assertThatThrownBy(() -> decode("{\"entity\":\"student-17\",\"seq\":\"7\",\"op\":\"delete\"}"))
                .hasMessage("'seq' must be a whole number, was \"7\" (entity 'student-17')");
        assertThatThrownBy(() -> decode("{\"seq\":7,\"op\":\"delete\"}")).hasMessage("missing 'entity' (seq 7)");
        assertThatThrownBy(() -> decode("{\"entity\":\"" + "x".repeat(600) + "\",\"seq\":7,\"op\":\"delete\"}"))
                .hasMessageStartingWith("entity id is longer than 512 characters (entity 'xxx")
                .hasMessageEndingWith("...', seq 7)");
        assertThatThrownBy(() -> decode("{\"entity\":\"e\",\"seq\":7,\"op\":\"upsert\"}"))
                .hasMessageStartingWith("unknown op 'upsert'").hasMessageEndingWith("(entity 'e', seq 7)");
    }

    private static byte[] bytes(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
