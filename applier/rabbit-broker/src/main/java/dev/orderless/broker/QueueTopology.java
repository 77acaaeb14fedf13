package dev.orderless.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ShutdownSignalException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.broker.internal.BrokerRefusals;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Declares a work queue and its dead-letter queue, the best way the broker allows.
 *
 * <ul>
 *   <li>RabbitMQ: the work queue is a quorum queue (replicated, and with a delivery limit, so a message
 *       that keeps crashing consumers cannot cycle for ever) with {@code x-dead-letter-exchange} routing
 *       what the broker itself rejects to the dead-letter queue. Bad input is still republished by the
 *       consumer, because only a republish can carry the reason header.
 *   <li>Any other AMQP 0-9-1 broker: a classic durable queue; dead-lettering is the consumer's republish.
 * </ul>
 * With a dead-letter TTL (RabbitMQ only), the broker moves a letter older than it from the dead-letter
 * queue to its parking queue ({@link #parkingQueue}), declared with it: the dead-letter queue then holds
 * only letters young enough to replay. RabbitMQ dead-letters from a classic queue at most once: a letter
 * in that move when a broker node fails can be lost, so the TTL is a way to keep the dead-letter queue
 * replayable, not a second copy. Choose the TTL no longer than the tombstone grace.
 * Re-declaring with the same arguments is harmless; a queue that exists with other arguments is reported
 * as a configuration error naming it (RabbitMQ cannot change a queue's arguments in place).
 */
public final class QueueTopology {
    /** RabbitMQ's limit on redeliveries of one message before it dead-letters it itself. */
    public static final int DELIVERY_LIMIT = 50;
    /** RabbitMQ's largest {@code x-message-ttl}: 2^32 - 1 ms. */
    static final long MAX_TTL_MILLIS = 0xFFFF_FFFFL;

    private QueueTopology() {
    }

    /** Which kind of work queue to declare. */
    public enum QueueType {
        /**
         * A quorum queue, on RabbitMQ: a delivery limit of {@value #DELIVERY_LIMIT} and the broker's own dead-lettering
         * ({@code x-dead-letter-exchange}) to the dead-letter queue, for a message that keeps crashing consumers.
         */
        QUORUM,
        /** A classic durable queue, for any AMQP 0-9-1 broker: dead letters are the consumer's own republish. */
        CLASSIC;

        /** The type for a broker that is RabbitMQ ({@link #QUORUM}) or not ({@link #CLASSIC}). */
        public static QueueType forBroker(boolean rabbitMq) {
            return rabbitMq ? QUORUM : CLASSIC;
        }
    }

    /** What was declared. */
    public record Declared(String queue, String deadLetterQueue, QueueType type) {
        /** @deprecated use {@link #type()} */
        @Deprecated
        public boolean quorum() {
            return type == QueueType.QUORUM;
        }
    }

    /** Declares both queues: a quorum work queue where the broker is RabbitMQ (it asks), a classic one elsewhere. */
    public static Declared declare(ConnectionFactory connectionFactory, String queue, String deadLetterQueue) {
        return declare(connectionFactory, queue, deadLetterQueue, QueueType.forBroker(isRabbitMq(connectionFactory)));
    }

    /** Declares both queues, the work queue of {@code type}. */
    public static Declared declare(ConnectionFactory connectionFactory, String queue, String deadLetterQueue,
                                   QueueType type) {
        return declare(connectionFactory, queue, deadLetterQueue, type, Optional.empty());
    }

    /** As {@link #declare(ConnectionFactory, String, String, QueueType)}, parking letters older than {@code deadLetterTtl}. */
    public static Declared declare(ConnectionFactory connectionFactory, String queue, String deadLetterQueue,
                                   QueueType type, Optional<Duration> deadLetterTtl) {
        RabbitAdmin admin = new RabbitAdmin(connectionFactory);
        for (Queue each : declarables(queue, deadLetterQueue, type, deadLetterTtl).getDeclarablesByType(Queue.class)) {
            declare(connectionFactory, admin, each);
        }
        return new Declared(queue, deadLetterQueue, type);
    }

    /** @deprecated name the queue type: {@link #declare(ConnectionFactory, String, String, QueueType)} */
    @Deprecated
    public static Declared declare(ConnectionFactory connectionFactory, String queue, String deadLetterQueue,
                                   boolean rabbitMq) {
        return declare(connectionFactory, queue, deadLetterQueue, QueueType.forBroker(rabbitMq));
    }

    /** @deprecated name the queue type: {@link #declare(ConnectionFactory, String, String, QueueType, Optional)} */
    @Deprecated
    public static Declared declare(ConnectionFactory connectionFactory, String queue, String deadLetterQueue,
                                   boolean rabbitMq, Optional<Duration> deadLetterTtl) {
        return declare(connectionFactory, queue, deadLetterQueue, QueueType.forBroker(rabbitMq), deadLetterTtl);
    }

    /**
     * The same two queues, dead-letter queue first, for a {@code RabbitAdmin} to declare (a Spring
     * application's {@code Declarables} bean).
     */
    public static Declarables declarables(String queue, String deadLetterQueue, QueueType type) {
        return declarables(queue, deadLetterQueue, type, Optional.empty());
    }

    /**
     * As {@link #declarables(String, String, QueueType)}; with a dead-letter TTL on a quorum queue, the parking
     * queue first and the dead-letter queue's letters moving there once older than the TTL.
     */
    public static Declarables declarables(String queue, String deadLetterQueue, QueueType type,
                                          Optional<Duration> deadLetterTtl) {
        if (type == null) {
            throw new InvalidConfigurationException("queue topology: type must be QUORUM or CLASSIC, was null");
        }
        if (deadLetterTtl.isPresent() && (deadLetterTtl.get().isNegative() || deadLetterTtl.get().isZero()
                || deadLetterTtl.get().toMillis() > MAX_TTL_MILLIS)) {
            throw new InvalidConfigurationException("dead-letter TTL must be positive and at most " + MAX_TTL_MILLIS
                    + " ms (RabbitMQ's limit, about 49 days), was " + deadLetterTtl.get());
        }
        boolean quorum = type == QueueType.QUORUM;
        Queue work = quorum
                ? QueueBuilder.durable(queue).quorum().deliveryLimit(DELIVERY_LIMIT)
                        .deadLetterExchange("").deadLetterRoutingKey(deadLetterQueue).build()
                : QueueBuilder.durable(queue).build();
        if (deadLetterTtl.isEmpty() || !quorum) {
            return new Declarables(QueueBuilder.durable(deadLetterQueue).build(), work);
        }
        Queue parking = QueueBuilder.durable(parkingQueue(deadLetterQueue)).build();
        Queue dlq = QueueBuilder.durable(deadLetterQueue).withArgument("x-message-ttl", deadLetterTtl.get().toMillis())
                .deadLetterExchange("").deadLetterRoutingKey(parkingQueue(deadLetterQueue)).build();
        return new Declarables(parking, dlq, work);
    }

    /** @deprecated name the queue type: {@link #declarables(String, String, QueueType)} */
    @Deprecated
    public static Declarables declarables(String queue, String deadLetterQueue, boolean rabbitMq) {
        return declarables(queue, deadLetterQueue, QueueType.forBroker(rabbitMq));
    }

    /** @deprecated name the queue type: {@link #declarables(String, String, QueueType, Optional)} */
    @Deprecated
    public static Declarables declarables(String queue, String deadLetterQueue, boolean rabbitMq,
                                          Optional<Duration> deadLetterTtl) {
        return declarables(queue, deadLetterQueue, QueueType.forBroker(rabbitMq), deadLetterTtl);
    }

    /** Where letters of {@code deadLetterQueue} are parked: kept, never replayed by themselves. */
    public static String parkingQueue(String deadLetterQueue) {
        return deadLetterQueue + ".parked";
    }

    /**
     * Whether {@code queue} exists, and its counts, as the broker answers a passive declaration. Only a broker that
     * answers normally can say a queue is missing: a channel closed with 404 ({@code NOT_FOUND}) for that queue. Every
     * other failure leaves it unknown and throws: a connection refused, cut or closed while the broker starts or
     * stops, a timeout, and RabbitMQ's 404 for a queue whose node is down ("home node ... is down or inaccessible",
     * a classic queue in a cluster losing a node). Spring's {@code RabbitAdmin.getQueueProperties} returns null for
     * all of them alike, so a consumer started while the broker restarted read "does not exist".
     *
     * @return the queue's name and counts (ready messages, consumers), or empty if the broker says it does not exist
     * @throws dev.orderless.TransientException        if the broker did not answer normally: worth asking again
     * @throws InvalidConfigurationException if the broker refused the connection (login, virtual host, permissions),
     *                                       or refused this queue (403 permissions on it, 405 another connection's
     *                                       exclusive queue)
     */
    public static Optional<QueueInformation> lookup(ConnectionFactory connectionFactory, String queue) {
        try {
            return Optional.ofNullable(new RabbitTemplate(connectionFactory).execute(channel -> {
                AMQP.Queue.DeclareOk ok = channel.queueDeclarePassive(queue);
                return new QueueInformation(ok.getQueue(), ok.getMessageCount(), ok.getConsumerCount());
            }));
        } catch (AmqpException e) {
            if (BrokerRefusals.configurationProblem(e).isEmpty() && closedWith(e, AMQP.NOT_FOUND)
                    .filter(text -> !text.contains("down or inaccessible")).isPresent()) {
                return Optional.empty();
            }
            if (BrokerRefusals.configurationProblem(e).isPresent() || e instanceof AmqpConnectException) {
                // refused the login, or no connection at all: what to check is the connection, not the queue
                throw BrokerRefusals.named(connectionFactory, "looking for queue '" + queue + "'", e);
            }
            Optional<String> refused = refusedAs(e, queue);
            if (refused.isPresent()) {
                throw new InvalidConfigurationException("RabbitMQ at " + BrokerRefusals.address(connectionFactory)
                        + " refused looking for queue '" + queue + "': " + refused.get(), e);
            }
            throw new TransientException(BrokerRefusals.where(connectionFactory) + " did not answer normally when"
                    + " asked for queue '" + queue + "' (" + rootMessage(e) + "): it may be starting, stopping or"
                    + " failing over, or not be running (check it, and the connection factory's host, port and virtual"
                    + " host); whether the queue exists is not known yet", e);
        }
    }

    /**
     * What to fix if the broker answered normally and refused {@code queue} on the channel for good: 403 (the
     * user's permissions on it) or 405 (another connection's exclusive queue, or one declared with another
     * exclusive property). Asking again gets the same answer, so these are configuration, never "not reachable".
     */
    private static Optional<String> refusedAs(Throwable e, String queue) {
        return closedWith(e, AMQP.ACCESS_REFUSED).map(text -> text + "; check the user's configure and read"
                        + " permissions on queue '" + queue + "' in the virtual host")
                .or(() -> closedWith(e, AMQP.RESOURCE_LOCKED).map(text -> text + "; another connection holds a queue"
                        + " of that name exclusively, or it exists with another exclusive property: choose another"
                        + " name"));
    }

    /** The reply text if {@code e} is the broker closing a channel (not the connection) with {@code code}. */
    private static Optional<String> closedWith(Throwable e, int code) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ShutdownSignalException signal && !signal.isHardError()
                    && signal.getReason() instanceof AMQP.Channel.Close close && close.getReplyCode() == code) {
                return Optional.of(String.valueOf(close.getReplyText()));
            }
        }
        return Optional.empty();
    }

    /** True if the broker says it is RabbitMQ (its {@code product} server property). */
    public static boolean isRabbitMq(ConnectionFactory connectionFactory) {
        try (Connection connection = connectionFactory.createConnection()) {
            Map<String, Object> server = connection.getDelegate().getServerProperties();
            Object product = server.get("product");
            return product != null && product.toString().toLowerCase(java.util.Locale.ROOT).contains("rabbitmq");
        } catch (AmqpException e) {
            throw BrokerRefusals.named(connectionFactory, "reading which broker and version it is", e);
        }
    }

    private static void declare(ConnectionFactory connectionFactory, RabbitAdmin admin, Queue queue) {
        try {
            admin.declareQueue(queue);
        } catch (AmqpException e) {
            Optional<String> refused = refusedAs(e, queue.getName());
            if (BrokerRefusals.configurationProblem(e).isEmpty() && refused.isPresent()) {
                throw new InvalidConfigurationException("RabbitMQ at " + BrokerRefusals.address(connectionFactory)
                        + " refused declaring queue '" + queue.getName() + "': " + refused.get(), e);
            }
            if (BrokerRefusals.configurationProblem(e).isPresent() || closedWith(e, AMQP.PRECONDITION_FAILED).isEmpty()) {
                // refused the connection, or did not answer (refused, timed out, cut, a node down or electing a
                // leader): nothing to say about the queue's arguments
                throw BrokerRefusals.named(connectionFactory, "declaring queue '" + queue.getName() + "'", e);
            }
            throw new InvalidConfigurationException("queue '" + queue.getName() + "' could not be declared with "
                    + queue.getArguments() + " (" + rootMessage(e) + "); if it exists with other arguments, which"
                    + " RabbitMQ cannot change in place: undo the change, or choose another name, or move its"
                    + " messages elsewhere (a dead-letter queue's: DeadLetterQueue.park) before deleting it");
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return String.valueOf(t.getMessage());
    }
}
