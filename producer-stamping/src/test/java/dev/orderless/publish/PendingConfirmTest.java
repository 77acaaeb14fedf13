package dev.orderless.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.CorrelationData;

class PendingConfirmTest {
    private final CorrelationData correlation = new CorrelationData("m1");

    @Test
    void an_acked_message_is_taken() {
        PendingConfirm<String> pending = PendingConfirm.sent("m1", correlation);
        correlation.getFuture().complete(new CorrelationData.Confirm(true, null));

        assertThat(pending.await(0)).isEmpty();
    }

    @Test
    void a_nacked_message_is_not_taken_and_says_why() {
        PendingConfirm<String> pending = PendingConfirm.sent("m1", correlation);
        correlation.getFuture().complete(new CorrelationData.Confirm(false, "queue full"));

        assertThat(pending.await(0)).contains("nacked by the broker: queue full");
    }

    @Test
    void only_a_nack_counts_as_nacked_for_closing_its_channel() {
        PendingConfirm<String> pending = PendingConfirm.sent("m1", correlation);
        assertThat(pending.nacked()).as("no confirm yet").isFalse();

        correlation.getFuture().complete(new CorrelationData.Confirm(false, null));
        assertThat(pending.nacked()).isTrue();

        CorrelationData acked = new CorrelationData("m2");
        acked.getFuture().complete(new CorrelationData.Confirm(true, null));
        assertThat(PendingConfirm.sent("m2", acked).nacked()).isFalse();

        CorrelationData returned = new CorrelationData("m3");
        returned.setReturned(new ReturnedMessage(new Message(new byte[0], new MessageProperties()), 312, "NO_ROUTE",
                "orders", "nowhere"));
        returned.getFuture().complete(new CorrelationData.Confirm(false, null));
        assertThat(PendingConfirm.sent("m3", returned).nacked()).as("a return says more than its nack").isFalse();
    }

    @Test
    void a_returned_message_is_reported_as_returned_even_when_acked() {
        PendingConfirm<String> pending = PendingConfirm.sent("m1", correlation);
        correlation.setReturned(new ReturnedMessage(new Message(new byte[0], new MessageProperties()), 312, "NO_ROUTE",
                "orders", "nowhere"));
        correlation.getFuture().complete(new CorrelationData.Confirm(true, null));

        assertThat(pending.await(0)).hasValueSatisfying(why -> assertThat(why)
                .isEqualTo("returned: NO_ROUTE (312) to exchange 'orders' with routing key 'nowhere'"));
    }

    @Test
    void a_message_with_no_confirm_in_time_is_not_taken() {
        PendingConfirm<String> pending = PendingConfirm.sent("m1", correlation);

        assertThat(pending.await(0)).contains("no confirm within the window's confirm timeout");
    }

    @Test
    void a_refused_message_never_waits_for_a_confirm() {
        PendingConfirm<String> pending = PendingConfirm.refused("m1", correlation, "message id too long");

        assertThat(pending.refusal()).contains("message id too long");
        assertThat(pending.await(Long.MAX_VALUE)).contains("message id too long");
    }

    @Test
    void a_message_whose_send_failed_is_not_taken_without_waiting() {
        PendingConfirm<String> pending = PendingConfirm.notSent("m1", correlation, "send failed: connection refused");

        assertThat(pending.sendFailure()).isPresent();
        assertThat(pending.await(Long.MAX_VALUE)).contains("send failed: connection refused");
    }

    @Test
    void an_ack_with_no_return_is_taken() {
        assertThat(PendingConfirm.notTaken(new CorrelationData.Confirm(true, null), Optional.empty())).isEmpty();
    }
}
