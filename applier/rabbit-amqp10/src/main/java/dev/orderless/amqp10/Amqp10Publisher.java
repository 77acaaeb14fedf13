package dev.orderless.amqp10;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Publisher;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import dev.orderless.publish.OperationPublisher;
import dev.orderless.publish.PublishFailedException;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.internal.Outgoing;
import dev.orderless.publish.internal.Windows;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes operations to a queue over AMQP 1.0 as canonical JSON envelopes, and does not consider one sent
 * until the broker settled it {@code accepted}:
 *
 * <ol>
 *   <li>Send up to {@link PublisherOptions#window()} messages, each with the operation's message-id. While
 *       RabbitMQ blocks publishing (a resource alarm) it grants no credit: a send waits at most the confirm
 *       timeout, then it and the rest of the window count as not taken; the window has one deadline.
 *   <li>Wait for every outcome, {@link PublisherOptions#confirmTimeout()} for the whole window. Accepted: done.
 *       Rejected, released, timed out, or not sent: not taken.
 *   <li>Send what was not taken again after a pause ({@link PublisherOptions#backoff()}), up to
 *       {@link PublisherOptions#maxAttempts()} sends, on a new link if the client closed the last one; then
 *       throw {@link PublishFailedException} listing it. A message accepted after the timeout is sent again: a
 *       duplicate, which consumers tell as such by its {@code (entity, seq)}.
 * </ol>
 * One publisher per instance, on the caller's connection; {@link #close()} closes the publisher, not the
 * connection.
 */
public final class Amqp10Publisher implements OperationPublisher, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Amqp10Publisher.class);

    private final Connection connection;
    /** Rebuilt when the client closed it (it gives a publisher up when its link fails for good). */
    private Link link;
    private final String queue;
    private final PublisherOptions options;
    private final Envelope envelope = new Envelope();

    private Amqp10Publisher(Connection connection, String queue, PublisherOptions options) {
        this.connection = connection;
        this.queue = queue;
        this.options = options;
    }

    /** A publisher to {@code queue} on {@code connection}. */
    public static Amqp10Publisher toQueue(Connection connection, String queue, PublisherOptions options) {
        if (connection == null || queue == null || queue.isBlank() || options == null) {
            throw new InvalidConfigurationException("AMQP 1.0 publisher: connection, queue and options are required");
        }
        Amqp10Publisher created = new Amqp10Publisher(connection, queue, options);
        created.link = created.open();
        return created;
    }

    /** A publisher of the client, and whether the client has closed it (set from the client's thread). */
    private record Link(Publisher publisher, java.util.concurrent.atomic.AtomicBoolean closed) {
    }

    private Link open() {
        java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        Publisher publisher = connection.publisherBuilder().queue(queue).publishTimeout(options.confirmTimeout())
                .listeners(change -> {
                    if (change.currentState() == com.rabbitmq.client.amqp.Resource.State.CLOSED) {
                        closed.set(true);
                    }
                }).build();
        return new Link(publisher, closed);
    }

    /**
     * How it publishes.
     *
     * @return the options it was built with
     */
    public PublisherOptions options() {
        return options;
    }

    @Override
    public synchronized void publishAll(List<? extends Operation> ops) {
        Windows.publish(Outgoing.of(ops, envelope), options.window(), this::publishWindow);
    }

    @Override
    public synchronized void publishRaw(List<byte[]> bodies) {
        Windows.publish(Outgoing.raw(bodies), options.window(), this::publishWindow);
    }

    @Override
    public synchronized void close() {
        link.publisher().close();
    }

    /** One send and its outcome: the reason it was not taken, or empty once accepted. */
    private record Sent(Outgoing message, CompletableFuture<Optional<String>> outcome) {
    }

    private void publishWindow(List<Outgoing> pending) {
        for (int attempt = 1; ; attempt++) {
            long deadline = System.nanoTime() + options.confirmTimeout().toNanos();
            List<Sent> sent = new ArrayList<>(pending.size());
            String notSent = reopenIfClosed();
            for (Outgoing next : pending) {
                // one deadline for the window: once a send found no credit in time (a blocked broker) or the link
                // gone, the rest of the window is not sent this attempt, instead of each waiting as long again
                if (notSent.isEmpty() && System.nanoTime() - deadline < 0) {
                    Sent s = send(next);
                    sent.add(s);
                    notSent = s.outcome().getNow(Optional.empty()).filter(reason -> reason.startsWith("not sent"))
                            .orElse("");
                } else {
                    sent.add(new Sent(next, CompletableFuture.completedFuture(Optional.of(notSent.isEmpty()
                            ? "not sent: the window's confirm timeout passed" : notSent))));
                }
            }
            List<Outgoing> notTaken = new ArrayList<>();
            String lastReason = "";
            for (Sent s : sent) {
                Optional<String> reason = await(s.outcome(), deadline);
                if (reason.isPresent()) {
                    notTaken.add(s.message());
                    lastReason = reason.get();
                }
            }
            if (notTaken.isEmpty()) {
                return;
            }
            if (attempt >= options.maxAttempts()) {
                throw new PublishFailedException(notTaken.size() + " message(s) not taken by RabbitMQ (queue '" + queue
                        + "') after " + attempt + " attempts (last reason: " + lastReason + "); first: "
                        + notTaken.get(0), Outgoing.ops(notTaken));
            }
            log.warn("{} message(s) not taken by RabbitMQ (queue '{}': {}); sending them again, attempt {} of {}",
                    notTaken.size(), queue, lastReason, attempt + 1, options.maxAttempts());
            try {
                Thread.sleep(options.backoff().pause(attempt).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PublishFailedException("interrupted before sending " + notTaken.size() + " message(s) again",
                        Outgoing.ops(notTaken));
            }
            pending = notTaken;
        }
    }

    private Sent send(Outgoing message) {
        CompletableFuture<Optional<String>> outcome = new CompletableFuture<>();
        try {
            link.publisher().publish(link.publisher().message(message.body()).messageId(message.id())
                    .contentType("application/json").durable(true), context -> {
                        Publisher.Status status = context.status();
                        outcome.complete(status == Publisher.Status.ACCEPTED ? Optional.empty()
                                : Optional.of(status.name().toLowerCase(java.util.Locale.ROOT)));
                    });
        } catch (RuntimeException e) {
            // no credit within the timeout (a blocked broker), or the link closed: not sent this time
            outcome.complete(Optional.of("not sent: " + e.getMessage()));
        }
        return new Sent(message, outcome);
    }

    /** A new link if the client closed the last one; empty, or why nothing can be sent this attempt. */
    private String reopenIfClosed() {
        if (!link.closed().get()) {
            return "";
        }
        try {
            Link fresh = open();
            try {
                link.publisher().close();
            } catch (RuntimeException e) {
                log.debug("closing the publisher of '{}' that the client closed: {}", queue, e.toString());
            }
            link = fresh;
            log.info("AMQP 1.0 publisher to '{}': its link was closed; publishing on a new one", queue);
            return "";
        } catch (RuntimeException e) {
            return "not sent: no link to '" + queue + "' (" + e.getMessage() + ")";
        }
    }

    private static Optional<String> await(CompletableFuture<Optional<String>> outcome, long deadline) {
        try {
            return outcome.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return Optional.of("no outcome within the confirm timeout");
        } catch (ExecutionException e) {
            return Optional.of(String.valueOf(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }
}
