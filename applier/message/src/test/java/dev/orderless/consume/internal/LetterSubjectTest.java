package dev.orderless.consume.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Whose operation an undecoded body held, read as far as it can be. */
class LetterSubjectTest {

    private static LetterSubject peek(String body) {
        return LetterSubject.peek(body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void the_entity_and_seq_of_a_json_object_are_read_whatever_comes_around_them() {
        assertThat(peek("{\"attrs\":{\"entity\":\"no\"},\"entity\":\"p1\",\"pad\":[1,2,{\"seq\":3}],\"seq\":7,\"op\":1}"))
                .isEqualTo(new LetterSubject(Optional.of("p1"), OptionalLong.of(7)));
    }

    @Test
    void what_is_missing_mistyped_or_unreadable_is_not_known() {
        assertThat(peek("{\"entity\":\"p1\",\"seq\":\"7\"}")).isEqualTo(new LetterSubject(Optional.of("p1"), OptionalLong.empty()));
        assertThat(peek("{\"entity\":5,\"seq\":1.5}")).isEqualTo(LetterSubject.none());
        assertThat(peek("not json")).isEqualTo(LetterSubject.none());
        assertThat(peek("[1]")).isEqualTo(LetterSubject.none());
        assertThat(peek("{\"seq\":7,\"entity\":\"p1\",")).isEqualTo(new LetterSubject(Optional.of("p1"), OptionalLong.of(7)));
        assertThat(peek("{\"entity\":\"" + "x".repeat(600) + "\",\"seq\":7}"))
                .as("longer than any entity").isEqualTo(new LetterSubject(Optional.empty(), OptionalLong.of(7)));
    }
}
