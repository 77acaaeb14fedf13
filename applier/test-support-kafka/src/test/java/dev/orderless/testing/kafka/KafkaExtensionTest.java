package dev.orderless.testing.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@Tag("kafka")
@ExtendWith(KafkaExtension.class)
class KafkaExtensionTest {
    private static KafkaBroker fromBeforeAll;

    @BeforeAll
    static void remember(KafkaBroker broker) {
        fromBeforeAll = broker;
    }

    @Test
    void a_test_gets_the_class_s_broker_which_answers(KafkaBroker broker) {
        assertThat(broker).isSameAs(fromBeforeAll);
        String topic = Clients.unique("topic");
        KafkaTopics.create(broker.bootstrapServers(), topic, 2);
        assertThat(KafkaTopics.count(broker.bootstrapServers(), topic)).isZero();
        KafkaTopics.delete(broker.bootstrapServers(), topic);
    }

    @Nested
    class A_nested_class {
        @Test
        void gets_its_outer_class_s_broker(KafkaBroker broker) {
            assertThat(broker).isSameAs(fromBeforeAll);
        }
    }
}
