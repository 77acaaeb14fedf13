package dev.orderless.kafka.internal;

import dev.orderless.consume.internal.Delivery;
import dev.orderless.consume.internal.LetterSubject;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ShareConsumer;
import org.apache.kafka.common.header.Header;

/**
 * One record of a share group, settled through its consumer's explicit acknowledgement: ACCEPT once applied or found
 * stale; a dead letter written to the dead-letter topic first, then REJECT (the broker archives it); RELEASE when
 * handed back (stopping); RENEW when its consumer holds it for another attempt. Settled once, on the thread that
 * polled it (a share consumer is single-threaded).
 */
public final class RecordDelivery implements Delivery {
    private final ShareConsumer<byte[], byte[]> consumer;
    private final ConsumerRecord<byte[], byte[]> record;
    private final DeadLetterWriter deadLetters;
    private final int deliveryLimit;
    private boolean settled;
    private boolean letterRefused;

    public RecordDelivery(ShareConsumer<byte[], byte[]> consumer, ConsumerRecord<byte[], byte[]> record,
                          DeadLetterWriter deadLetters, int deliveryLimit) {
        this.consumer = consumer;
        this.record = record;
        this.deadLetters = deadLetters;
        this.deliveryLimit = deliveryLimit;
    }

    public ConsumerRecord<byte[], byte[]> record() {
        return record;
    }

    /** How many times the broker delivered it, this time included (1 if the broker does not say). */
    public int deliveryCount() {
        return record.deliveryCount().map(Short::intValue).orElse(1);
    }

    /** Whether the dead-letter topic refused it on this delivery (it is held: the consumer pauses before the next poll). */
    public boolean letterRefused() {
        return letterRefused;
    }

    /** Whether it was settled (accepted, rejected, released or renewed) on this delivery. */
    public boolean settled() {
        return settled;
    }

    @Override
    public byte[] body() {
        return record.value() == null ? new byte[0] : record.value();
    }

    @Override
    public Object message() {
        return record;
    }

    @Override
    public Optional<String> header(String name) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? Optional.empty()
                : Optional.of(new String(header.value(), StandardCharsets.UTF_8));
    }

    @Override
    public void accept() {
        acknowledge(AcknowledgeType.ACCEPT);
    }

    /**
     * Hands it back to the group (stopping). On its last delivery a release would make the broker archive it, so it
     * goes to the dead-letter topic instead.
     */
    @Override
    public void requeue() {
        if (deliveryCount() >= deliveryLimit && !settled) {
            deadLetter("delivery_limit", "delivery limit: handed back by a stopping consumer on its last delivery ("
                    + deliveryCount() + " of " + deliveryLimit + ")", LetterSubject.peek(body()));
            return;
        }
        acknowledge(AcknowledgeType.RELEASE);
    }

    /** Keeps it: its acquisition lock renewed, it comes back to this consumer on a later poll. */
    public void renew() {
        acknowledge(AcknowledgeType.RENEW);
    }

    /**
     * Writes it to the dead-letter topic, then rejects it. If Kafka did not take the letter, the record is held
     * instead (renewed: it comes back to this consumer and is judged again), never released toward the broker's
     * delivery limit, after which the broker would drop it.
     */
    @Override
    public CompletionStage<Void> deadLetter(String kind, String reason, LetterSubject subject) {
        try {
            deadLetters.write(record, kind, reason, subject);
        } catch (RuntimeException e) {
            renew();
            letterRefused = true;
            return CompletableFuture.failedFuture(e);
        }
        acknowledge(AcknowledgeType.REJECT);
        return CompletableFuture.completedFuture(null);
    }

    private void acknowledge(AcknowledgeType type) {
        if (settled) {
            return;
        }
        consumer.acknowledge(record, type);
        settled = true;
    }
}
