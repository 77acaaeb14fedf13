package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import dev.orderless.consume.internal.DeadLetterFields;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageBuilderSupport;

/** What a dead letter carries, and how it is cut to what the connection takes: no broker needed. */
class DeadLetterHeadersTest {
    private static final int FRAME_MAX = 131_072;

    private static MessageBuilderSupport<Message> message() {
        return MessageBuilder.withBody("{}".getBytes(StandardCharsets.UTF_8)).setContentType("application/json");
    }

    @Test
    void a_letter_keeps_the_original_properties_and_headers_and_adds_orderless_headers() {
        Message original = message().setMessageId("m-1").setHeader("trace", "abc").build();

        AMQP.BasicProperties letter = DeadLetterHeaders.sendable(original, "q", "bad input: x", "id-1", FRAME_MAX);

        assertThat(letter.getMessageId()).isEqualTo("m-1");
        assertThat(letter.getContentType()).isEqualTo("application/json");
        assertThat(letter.getDeliveryMode()).isEqualTo(2);
        assertThat(letter.getHeaders()).containsEntry("trace", "abc")
                .containsEntry(DeadLetterFields.REASON, "bad input: x")
                .containsEntry(DeadLetterFields.EXCEPTION_MESSAGE, "bad input: x")
                .containsEntry(DeadLetterFields.ORIGINAL_QUEUE, "q")
                .containsEntry(DeadLetterFields.LETTER_ID, "id-1")
                .containsKey(DeadLetterFields.DEAD_LETTERED_AT);
    }

    @Test
    void original_properties_that_cannot_be_encoded_are_dropped_and_the_reason_says_so_keeping_the_history() {
        Message original = message().setMessageId("m".repeat(300))   // over an AMQP short string
                .setHeader(DeadLetterFields.REPLAY_COUNT, 2).setHeader("trace", "abc").build();

        AMQP.BasicProperties letter = DeadLetterHeaders.sendable(original, "q", "bad input: x", "id-1", FRAME_MAX);

        assertThat(letter.getMessageId()).isNull();
        assertThat(letter.getContentType()).isEqualTo("application/json");
        assertThat(letter.getHeaders()).doesNotContainKey("trace").containsEntry(DeadLetterFields.REPLAY_COUNT, 2)
                .containsEntry(DeadLetterFields.LETTER_ID, "id-1");
        assertThat(letter.getHeaders().get(DeadLetterFields.REASON).toString())
                .startsWith("bad input: x; its original properties were dropped: its AMQP properties cannot be encoded");
    }

    @Test
    void a_history_too_large_for_the_frame_is_dropped_too() {
        Message original = message().setHeader("x-death", List.of(Map.of("reason", "x".repeat(10_000)))).build();

        AMQP.BasicProperties letter = DeadLetterHeaders.sendable(original, "q", "bad input: x", "id-1", 4_096);

        assertThat(letter.getHeaders()).doesNotContainKey("x-death").containsEntry(DeadLetterFields.LETTER_ID, "id-1");
        assertThat(letter.getHeaders().get(DeadLetterFields.REASON).toString())
                .contains("its original properties were dropped").contains("more than the connection's frame_max (4096)");
    }

    @Test
    void a_frame_max_of_zero_sets_no_limit() {
        Message original = message().setHeader("big", "x".repeat(200_000)).build();

        assertThat(DeadLetterHeaders.sendable(original, "q", "bad input: x", "id-1", 0).getHeaders())
                .containsKey("big");
    }

    @Test
    void a_reason_is_one_line_of_at_most_the_limit() {
        String reason = DeadLetterFields.shortReason("first\nsecond\t" + "x".repeat(500));

        assertThat(reason).hasSize(DeadLetterFields.MAX_REASON).startsWith("first second x").endsWith("...");
        assertThat(DeadLetterFields.shortReason(null)).isEqualTo("unknown");
    }
}
