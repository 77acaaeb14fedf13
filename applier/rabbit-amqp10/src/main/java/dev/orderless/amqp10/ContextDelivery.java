package dev.orderless.amqp10;

import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Message;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.consume.internal.LetterSubject;
import dev.orderless.consume.internal.Delivery;
import java.io.IOException;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * A delivery of the AMQP 1.0 client, settled with the outcomes RabbitMQ understands: {@code accepted},
 * {@code released} (back to the queue, its delivery count unchanged), and {@code modified} with
 * delivery-failed and undeliverable-here ({@link Consumer.Context#discard(Map)}), on which a quorum queue
 * dead-letters the message itself, its annotations combined with the consumer's. That settlement is the dead
 * letter: there is no second step to be cut between, so a consumer that dies at any point leaves the message
 * either dead-lettered once or back in its queue.
 *
 * <p>The annotations: {@code x-opt-orderless-reason}, {@code -reason-kind}, {@code -original-queue} and
 * {@code -dead-lettered-at} (the first time, kept through replays), named after the AMQP 0-9-1 headers
 * ({@link DeadLetterFields#annotation}).
 */
final class ContextDelivery implements Delivery {
    private final Consumer.Context context;
    private final Message message;
    private final String queue;
    private final Clock clock;
    private final AtomicBoolean settled = new AtomicBoolean();
    private final BooleanSupplier onItsLink;

    /** @param onItsLink false once the link it came on was lost: it cannot be settled any more */
    ContextDelivery(Consumer.Context context, Message message, String queue, Clock clock, BooleanSupplier onItsLink) {
        this.context = context;
        this.message = message;
        this.queue = queue;
        this.clock = clock;
        this.onItsLink = onItsLink;
    }

    /** The client settles a delivery of a lost link silently as nothing: say so instead. */
    private void requireItsLink() throws IOException {
        if (!onItsLink.getAsBoolean()) {
            throw new IOException("its link was lost since it came (the broker has put it back in '" + queue + "')");
        }
    }

    @Override
    public Message message() {
        return message;
    }

    @Override
    public byte[] body() {
        byte[] body = message.body();
        return body == null ? new byte[0] : body;
    }

    @Override
    public Optional<String> header(String name) {
        Object value = message.property(name);
        if (value == null && name.startsWith("x-") && message.hasAnnotation(name)) {
            value = message.annotation(name);   // RabbitMQ maps an AMQP 0-9-1 "x-" header to an annotation
        }
        return Optional.ofNullable(value).map(Object::toString);
    }

    @Override
    public void accept() throws IOException {
        requireItsLink();
        if (settled.compareAndSet(false, true)) {
            context.accept();
        }
    }

    @Override
    public void requeue() throws IOException {
        requireItsLink();
        if (settled.compareAndSet(false, true)) {
            context.requeue();
        }
    }

    /** Hands it back if nothing settled it yet: what a worker does with what it held when it stops or fails. */
    void requeueIfUnsettled() {
        try {
            requeue();
        } catch (IOException | RuntimeException e) {
            // the link is gone: the broker puts every unsettled message back by itself
        }
    }

    /**
     * Hands it back as failed, if nothing settled it yet ({@code modified} with delivery-failed): the broker counts
     * it towards the queue's delivery limit, so a message that keeps failing this way ends dead-lettered by the
     * broker instead of coming back for ever.
     */
    void failIfUnsettled() {
        try {
            requireItsLink();
            if (settled.compareAndSet(false, true)) {
                context.requeue(Map.of(), true);
            }
        } catch (IOException | RuntimeException e) {
            // the link is gone: the broker puts every unsettled message back by itself
        }
    }

    @Override
    public CompletionStage<Void> deadLetter(String kind, String reason, LetterSubject subject) {
        try {
            requireItsLink();
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (!settled.compareAndSet(false, true)) {
            return CompletableFuture.failedFuture(new IllegalStateException("already settled"));
        }
        Object carried = header(DeadLetterFields.DEAD_LETTERED_AT)
                .or(() -> header(DeadLetterFields.annotation(DeadLetterFields.DEAD_LETTERED_AT))).orElse(null);
        Map<String, Object> annotations = new java.util.HashMap<>(Map.of(
                DeadLetterFields.annotation(DeadLetterFields.REASON), DeadLetterFields.shortReason(reason),
                DeadLetterFields.annotation(DeadLetterFields.REASON_KIND), kind,
                DeadLetterFields.annotation(DeadLetterFields.ORIGINAL_QUEUE), queue,
                DeadLetterFields.annotation(DeadLetterFields.DEAD_LETTERED_AT),
                DeadLetterFields.deadLetteredAt(carried, clock.instant()).toString()));
        subject.entity().ifPresent(entity -> annotations.put(DeadLetterFields.annotation(DeadLetterFields.ENTITY), entity));
        subject.seq().ifPresent(seq -> annotations.put(DeadLetterFields.annotation(DeadLetterFields.SEQ), seq));
        try {
            context.discard(annotations);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            // not settled: the link or connection closed, and the broker puts the message back in its queue
            return CompletableFuture.failedFuture(e);
        }
    }
}
