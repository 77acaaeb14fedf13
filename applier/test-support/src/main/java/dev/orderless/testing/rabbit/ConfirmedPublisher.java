package dev.orderless.testing.rabbit;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Test-side publishing: sends raw bodies to a queue and makes sure every one was confirmed and routed, or says in one
 * line which broker did not take which message, and why.
 */
public final class ConfirmedPublisher {
    private ConfirmedPublisher() {
    }

    /**
     * Sends {@code bodies} to {@code queue} in the order given, all on one channel, and waits for each to be confirmed
     * and routed. One channel: a caching connection factory hands consecutive sends the channels it holds idle in
     * turn, and the broker keeps the order of messages within a channel only, so sends spread over several channels
     * can reach the queue in another order (a chaos run's shrinking, which replays a history in a given order, saw
     * that).
     *
     * @param connectionFactory where to publish (with publisher confirms)
     * @param queue             the queue, through the default exchange
     * @param bodies            the message bodies, in order
     * @throws IllegalStateException one line naming the broker, the message and the cause, if a message could not be
     *                               sent, was not confirmed (nacked, its channel closed, not within 30 s) or not routed
     * @throws InterruptedException  if interrupted while waiting for a confirm
     */
    public static void publishAll(ConnectionFactory connectionFactory, String queue, List<byte[]> bodies)
            throws InterruptedException {
        String broker = "the broker at " + connectionFactory.getHost() + ":" + connectionFactory.getPort();
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        template.setMandatory(true);
        List<CorrelationData> pending = new ArrayList<>();
        try {
            template.invoke(onOneChannel -> {
                for (byte[] body : bodies) {
                    Message message = MessageBuilder.withBody(body).setContentType("application/json").build();
                    CorrelationData correlation = new CorrelationData(UUID.randomUUID().toString());
                    onOneChannel.send("", queue, message, correlation);
                    pending.add(correlation);
                }
                return null;
            });
        } catch (AmqpException e) {
            throw new IllegalStateException(broker + " refused message " + (pending.size() + 1) + " of " + bodies.size()
                    + " for '" + queue + "': " + oneLine(e.getMessage()), e);
        }
        for (int i = 0; i < pending.size(); i++) {
            CorrelationData correlation = pending.get(i);
            String which = "message " + (i + 1) + " of " + bodies.size() + " for '" + queue + "'";
            CorrelationData.Confirm confirm;
            try {
                confirm = correlation.getFuture().get(30, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException(broker + " did not confirm " + which + " within 30 s", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException(broker + " did not confirm " + which + ": " + oneLine(String.valueOf(
                        e.getCause())), e.getCause());
            }
            if (!confirm.ack()) {
                throw new IllegalStateException(broker + " did not take " + which + ": " + (confirm.getReason() == null
                        ? "nacked" : oneLine(confirm.getReason())));
            }
            if (correlation.getReturned() != null) {
                throw new IllegalStateException(broker + " did not route " + which + ": returned, "
                        + oneLine(correlation.getReturned().getReplyText()) + " (does the queue exist?)");
            }
        }
    }

    private static String oneLine(String text) {
        return String.valueOf(text).replaceAll("\\s+", " ").strip();
    }
}
