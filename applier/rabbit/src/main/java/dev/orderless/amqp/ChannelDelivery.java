package dev.orderless.amqp;

import com.rabbitmq.client.Channel;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.consume.internal.LetterSubject;
import dev.orderless.consume.internal.Delivery;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.springframework.amqp.core.Message;

/**
 * A delivery of Spring AMQP's container, settled on the consumer's channel: accepted with an ack, handed back
 * with a nack that requeues, and dead-lettered by the {@link DeadLetterRecoverer} (a republish with the reason
 * as headers), the original acked once the recoverer says the letter is safe and handed back if not.
 */
final class ChannelDelivery implements Delivery {
    private final Message message;
    private final Channel channel;
    private final DeadLetterRecoverer recoverer;

    ChannelDelivery(Message message, Channel channel, DeadLetterRecoverer recoverer) {
        this.message = message;
        this.channel = channel;
        this.recoverer = recoverer;
    }

    private long tag() {
        return message.getMessageProperties().getDeliveryTag();
    }

    @Override
    public byte[] body() {
        return message.getBody();
    }

    @Override
    public Message message() {
        return message;
    }

    @Override
    public Optional<String> header(String name) {
        return Optional.ofNullable(message.getMessageProperties().getHeader(name)).map(Object::toString);
    }

    @Override
    public void accept() throws IOException {
        channel.basicAck(tag(), false);
    }

    @Override
    public void requeue() throws IOException {
        channel.basicNack(tag(), false, true);
    }

    @Override
    public CompletionStage<Void> deadLetter(String kind, String reason, LetterSubject subject) {
        // the kind and the subject travel with the message, so any recoverer's letter carries them (DeadLetterQueue
        // sorts by kind and groups by reason, naming the entities)
        message.getMessageProperties().setHeader(DeadLetterFields.REASON_KIND, kind);
        subject.entity().ifPresent(entity -> message.getMessageProperties().setHeader(DeadLetterFields.ENTITY, entity));
        subject.seq().ifPresent(seq -> message.getMessageProperties().setHeader(DeadLetterFields.SEQ, seq));
        CompletableFuture<Void> sent;
        try {
            sent = recoverer.recover(message, channel, reason).toCompletableFuture();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> settled = new CompletableFuture<>();
        sent.whenComplete((ok, failure) -> {
            if (failure == null) {
                try {
                    channel.basicAck(tag(), false);
                    settled.complete(null);
                } catch (IOException | RuntimeException e) {
                    settled.completeExceptionally(new IOException("dead-lettered, but its original was not acked, the"
                            + " channel closed (" + e + "): the broker redelivers it, to be dead-lettered again", e));
                }
                return;
            }
            try {
                channel.basicNack(tag(), false, true);
            } catch (IOException | RuntimeException e) {
                // the channel closed: the broker redelivers the message all the same
            }
            settled.completeExceptionally(new IOException("the dead-letter publish failed: " + failure.getMessage(),
                    failure));
        });
        return settled;
    }
}
