package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** A reason without its entity and seq: what letters of one cause have in common. */
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
    void the_entity_and_seq_named_inside_a_reason_are_set_aside() {
        assertThat(ReasonShape.of("no progress: move write on students 's-1' seq 10 refused twice", Optional.of("s-1"),
                OptionalLong.of(10))).isEqualTo("no progress: move write on students '…' seq … refused twice");
    }

    @Test
    void a_reason_without_a_subject_is_left_as_it_is() {
        assertThat(ReasonShape.of("not JSON: Unexpected end-of-input", Optional.empty(), OptionalLong.empty()))
                .isEqualTo("not JSON: Unexpected end-of-input");
        assertThat(ReasonShape.of("seq 70 is older", Optional.empty(), OptionalLong.of(7))).isEqualTo("seq 70 is older");
    }
}
