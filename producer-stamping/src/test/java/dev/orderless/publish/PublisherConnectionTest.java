package dev.orderless.publish;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.amqp.UncategorizedAmqpException;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;

class PublisherConnectionTest {
    // a factory that is never connected: the checks below need no broker
    private final PublisherConnection connection = PublisherConnection.of(new CachingConnectionFactory("localhost", 1));

    private static Message withMessageId(String id, int bodyBytes) {
        MessageProperties properties = new MessageProperties();
        properties.setMessageId(id);
        return new Message(new byte[bodyBytes], properties);
    }

    @Test
    void a_message_that_fits_is_sendable() {
        assertThat(connection.unsendable(withMessageId("a".repeat(32), 100), new CorrelationData("c"))).isEmpty();
    }

    @Test
    void a_message_id_longer_than_an_amqp_short_string_is_refused_before_it_touches_the_channel() {
        assertThat(connection.unsendable(withMessageId("€".repeat(90), 100), new CorrelationData("c")))
                .hasValueSatisfying(why -> assertThat(why).contains("cannot be encoded"));
    }

    @Test
    void the_frame_size_a_connection_reports_bounds_what_fits() {
        Message big = new Message(new byte[10], headers(5_000));
        assertThat(connection.unsendable(big, new CorrelationData("c"))).isEmpty();

        connection.frameMaxIs(4_096);

        assertThat(connection.unsendable(big, new CorrelationData("c"))).isPresent();
    }

    @Test
    void a_frame_size_of_zero_means_no_limit() {
        connection.frameMaxIs(0);

        assertThat(connection.unsendable(new Message(new byte[10], headers(500_000)), new CorrelationData("c"))).isEmpty();
    }

    @Test
    void only_an_encoding_failure_of_the_client_is_client_side() {
        assertThat(PublisherConnection.clientSide(new UncategorizedAmqpException(
                new IllegalArgumentException("Short string too long")))).isTrue();
        assertThat(PublisherConnection.clientSide(new AmqpConnectException(new java.net.ConnectException("refused"))))
                .isFalse();
    }

    private static MessageProperties headers(int bytes) {
        MessageProperties properties = new MessageProperties();
        properties.setHeader("big", "x".repeat(bytes));
        return properties;
    }
}
