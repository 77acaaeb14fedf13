package dev.orderless.publish;

import com.rabbitmq.client.Channel;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.CorrelationData;

/**
 * One message on its way to the broker, and whether the broker took it: confirmed and routed, or why not.
 *
 * <ol>
 *   <li>Refused: it never reached the channel (the message itself cannot be sent); that is its outcome.
 *   <li>Not sent: the send itself failed (the connection's trouble); that is its outcome.
 *   <li>Sent: its confirm is awaited. A return is reported first (it says more than the nack some brokers
 *       send with it); then an ack is taken, a nack is not; no confirm in time is not taken.
 * </ol>
 *
 * @param <M> the message as the publisher knows it
 */
final class PendingConfirm<M> {
    private final M message;
    private final CorrelationData correlation;
    private final Optional<String> sendFailure;
    private final Optional<String> refusal;
    private final Optional<Channel> channel;

    private PendingConfirm(M message, CorrelationData correlation, Optional<String> sendFailure, Optional<String> refusal,
                           Optional<Channel> channel) {
        this.message = message;
        this.correlation = correlation;
        this.sendFailure = sendFailure;
        this.refusal = refusal;
        this.channel = channel;
    }

    /** Sent; its confirm completes {@code correlation}. */
    static <M> PendingConfirm<M> sent(M message, CorrelationData correlation) {
        return new PendingConfirm<>(message, correlation, Optional.empty(), Optional.empty(), Optional.empty());
    }

    /** Sent on {@code channel} (the client's own channel, not a cache's proxy); its confirm completes {@code correlation}. */
    static <M> PendingConfirm<M> sent(M message, CorrelationData correlation, Channel channel) {
        return new PendingConfirm<>(message, correlation, Optional.empty(), Optional.empty(), Optional.of(channel));
    }

    /** The send failed on the connection. */
    static <M> PendingConfirm<M> notSent(M message, CorrelationData correlation, String why) {
        return new PendingConfirm<>(message, correlation, Optional.of(why), Optional.empty(), Optional.empty());
    }

    /** Refused before it reached the channel: the message itself cannot be sent. */
    static <M> PendingConfirm<M> refused(M message, CorrelationData correlation, String why) {
        return new PendingConfirm<>(message, correlation, Optional.empty(), Optional.of(why), Optional.empty());
    }

    /** The channel it was sent on, where known. */
    Optional<Channel> channel() {
        return channel;
    }

    /** Whether the broker answered it with a nack (not a return, not a timeout): known once {@link #await} returned. */
    boolean nacked() {
        if (!correlation.getFuture().isDone() || correlation.getReturned() != null) {
            return false;
        }
        try {
            return !correlation.getFuture().getNow(new CorrelationData.Confirm(true, null)).ack();
        } catch (RuntimeException e) {
            return false;
        }
    }

    M message() {
        return message;
    }

    /** Why the message itself cannot be sent, if it was refused. */
    Optional<String> refusal() {
        return refusal;
    }

    /** Why the send failed on the connection, if it did. */
    Optional<String> sendFailure() {
        return sendFailure;
    }

    /** Empty once confirmed and routed; else why not, waiting at most {@code timeoutNanos} for the confirm. */
    Optional<String> await(long timeoutNanos) {
        if (refusal.isPresent()) {
            return refusal;
        }
        if (sendFailure.isPresent()) {
            return sendFailure;
        }
        try {
            CorrelationData.Confirm confirm = correlation.getFuture().get(timeoutNanos, TimeUnit.NANOSECONDS);
            return notTaken(confirm, Optional.ofNullable(correlation.getReturned()));
        } catch (TimeoutException e) {
            return Optional.of("no confirm within the window's confirm timeout");
        } catch (ExecutionException e) {
            return Optional.of("confirm failed: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    /** Why a confirmed message was not taken, if it was not: returned (unroutable) or nacked. */
    static Optional<String> notTaken(CorrelationData.Confirm confirm, Optional<ReturnedMessage> returned) {
        if (returned.isPresent()) {
            ReturnedMessage r = returned.get();
            return Optional.of("returned: " + r.getReplyText() + " (" + r.getReplyCode() + ") to exchange '"
                    + r.getExchange() + "' with routing key '" + r.getRoutingKey() + "'");
        }
        if (confirm.ack()) {
            return Optional.empty();
        }
        return Optional.of("nacked by the broker" + (confirm.reason() == null ? "" : ": " + confirm.reason()));
    }
}
