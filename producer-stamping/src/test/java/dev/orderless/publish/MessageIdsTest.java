package dev.orderless.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.Operation;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MessageIdsTest {

    @Test
    void a_message_id_is_32_hex_characters_whatever_the_entity() {
        for (String entity : new String[] {"s", "e".repeat(512), "ж".repeat(512), "学".repeat(512)}) {
            String id = MessageIds.of(Operation.delete(entity, Long.MAX_VALUE));
            assertThat(id).matches("[0-9a-f]{32}");
            assertThat(id.getBytes(StandardCharsets.UTF_8).length).as("an AMQP short string").isLessThanOrEqualTo(255);
        }
    }

    @Test
    void the_same_operation_gets_the_same_id_and_another_entity_or_seq_another() {
        assertThat(MessageIds.of(Operation.delete("s1", 12))).isEqualTo(MessageIds.of(Operation.delete("s1", 12)))
                .isNotEqualTo(MessageIds.of(Operation.delete("s1", 13)))
                .isNotEqualTo(MessageIds.of(Operation.delete("s11", 2)));
    }
}
