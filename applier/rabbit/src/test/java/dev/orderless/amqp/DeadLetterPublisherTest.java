package dev.orderless.amqp;

import dev.orderless.broker.BrokerBlocking;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/** The consumer's own dead-letter publisher on the real (or embedded) broker. */
@ExtendWith(RabbitExtension.class)
class DeadLetterPublisherTest {

    /**
     * The client numbers a publish for its confirm before it encodes it: sent on the channel, a letter whose
     * properties do not encode would leave every later confirm credited to the letter before it.
     */
    @Test
    void a_letter_whose_original_properties_cannot_be_sent_again_goes_out_without_them_and_the_next_ones_are_confirmed(
            ConnectionFactory cf) throws Exception {
        String queue = RabbitExtension.uniqueQueue("dl-publisher");
        String dlq = queue + ".dlq";
        new RabbitAdmin(cf).declareQueue(new Queue(dlq, true, false, false));
        BrokerBlocking blocking = BrokerBlocking.watch(cf, new SimpleMeterRegistry(), "test");
        List<CompletableFuture<Void>> settled = new ArrayList<>();
        try (DeadLetterPublisher publisher = new DeadLetterPublisher(cf, blocking, queue, dlq, Duration.ofSeconds(5),
                new SimpleMeterRegistry());
             Connection connection = cf.createConnection();
             Channel consumerChannel = connection.createChannel(false)) {
            Message unsendable = MessageBuilder.withBody("bad".getBytes(StandardCharsets.UTF_8))
                    .setMessageId("m".repeat(300)).build();   // over an AMQP short string
            settled.add(publisher.recover(unsendable, consumerChannel, "bad input: one").toCompletableFuture());
            for (int i = 0; i < 2; i++) {
                settled.add(publisher.recover(MessageBuilder.withBody(("good " + i).getBytes(StandardCharsets.UTF_8))
                        .build(), consumerChannel, "bad input: " + i).toCompletableFuture());
            }
            for (CompletableFuture<Void> letter : settled) {
                letter.get(30, TimeUnit.SECONDS);   // each confirmed as itself: none handed back
            }
            List<GetResponse> letters = drain(consumerChannel, dlq);
            assertThat(letters).hasSize(3);
            assertThat(letters).filteredOn(l -> new String(l.getBody(), StandardCharsets.UTF_8).equals("bad"))
                    .singleElement().satisfies(l -> {
                        assertThat(l.getProps().getMessageId()).isNull();
                        assertThat(l.getProps().getHeaders().get(DeadLetterFields.REASON).toString())
                                .contains("its original properties were dropped")
                                .contains("Short string too long");
                    });
        } finally {
            blocking.close();
            new RabbitAdmin(cf).deleteQueue(dlq);
        }
    }

    private static List<GetResponse> drain(Channel channel, String queue) throws Exception {
        List<GetResponse> all = new ArrayList<>();
        for (GetResponse r = channel.basicGet(queue, true); r != null; r = channel.basicGet(queue, true)) {
            all.add(r);
        }
        return all;
    }
}
