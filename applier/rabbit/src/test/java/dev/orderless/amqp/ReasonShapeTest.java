package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** A reason with what varies from letter to letter set aside: what letters of one cause have in common. */
class ReasonShapeTest {

    @Test
    void the_subject_at_the_end_of_a_reason_is_taken_off() {
        assertThat(ReasonShape.of("missing 'seq' (entity 'p1')", Optional.of("p1"), OptionalLong.empty()))
                .isEqualTo("missing 'seq'");
        assertThat(ReasonShape.of("unknown op 'x' (expected add) (entity 'p1', seq 7)", Optional.of("p1"), OptionalLong.of(7)))
                .isEqualTo("unknown op 'x' (expected add)");
        assertThat(ReasonShape.of("missing 'entity' (seq 7)", Optional.empty(), OptionalLong.of(7)))
                .isEqualTo("missing 'entity'");
    }

    @Test
    void the_subject_the_headers_name_is_taken_off_whole_whatever_it_holds() {
        assertThat(ReasonShape.of("unknown op 'x (entity 'q')' (expected add) (entity 'e', seq 1)", Optional.of("e"),
                OptionalLong.of(1))).isEqualTo("unknown op 'x (entity 'q')' (expected add)");
        assertThat(ReasonShape.of("missing 'op' (entity 'it's (new)', seq 3)", Optional.of("it's (new)"),
                OptionalLong.of(3))).isEqualTo("missing 'op'");
    }

    @Test
    void the_entity_and_seq_named_inside_a_reason_are_set_aside() {
        assertThat(ReasonShape.of("no progress: move write on students 's-1' seq 10 refused twice", Optional.of("s-1"),
                OptionalLong.of(10))).isEqualTo("no progress: move write on students '…' seq … refused twice");
    }

    @Test
    void letters_of_one_cause_with_different_numbers_have_one_shape() {
        assertThat(ReasonShape.of("held too long: 'a' seq 7 failed for 301 s", Optional.of("a"), OptionalLong.of(7)))
                .isEqualTo(ReasonShape.of("held too long: 'b' seq 9 failed for 302 s", Optional.of("b"), OptionalLong.of(9)));
        assertThat(ReasonShape.of("'seq' must be positive, was -1", Optional.empty(), OptionalLong.empty()))
                .isEqualTo(ReasonShape.of("'seq' must be positive, was 0", Optional.empty(), OptionalLong.empty()));
        assertThat(ReasonShape.of("oversized: 300000 bytes, limit 262144", Optional.empty(), OptionalLong.empty()))
                .isEqualTo("oversized: … bytes, limit …");
    }

    @Test
    void a_field_that_shares_the_entitys_name_stays() {
        assertThat(ReasonShape.of("unknown field 'name' (entity 'name', seq 4)", Optional.of("name"), OptionalLong.of(4)))
                .isEqualTo("unknown field 'name'");
    }

    @Test
    void a_reason_without_a_subject_keeps_its_words() {
        assertThat(ReasonShape.of("not JSON: Unexpected end-of-input", Optional.empty(), OptionalLong.empty()))
                .isEqualTo("not JSON: Unexpected end-of-input");
    }
}
