package dev.orderless.publish;

import com.rabbitmq.client.Channel;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.broker.BrokerBlocking;
import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import dev.orderless.publish.internal.Outgoing;
import dev.orderless.publish.internal.Windows;
import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.AbstractRoutingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Publishes operations as canonical JSON envelopes and does not consider one sent until the broker
 * confirmed it. Mandatory publishing: a message the broker cannot route comes back and counts as not
 * taken.
 *
 * <ol>
 *   <li>Send up to {@link PublisherOptions#window()} messages, each with its own correlation, on the
 *       connection factory's publisher connection (so a process that also consumes keeps acking while the
 *       broker blocks publishers).
 *   <li>Wait for every confirm, {@link PublisherOptions#confirmTimeout()} for the whole window. Confirmed
 *       and routed: done. Nacked, returned, timed out, or refused by a broken connection: not taken.
 *   <li>While RabbitMQ blocks publishing (a memory or disk alarm, seen through {@link BrokerBlocking}),
 *       nothing more is sent; if the block outlasts the window's confirm timeout, the publish fails with
 *       {@link BrokerBlockedException} ("broker is blocking publishers: low on disk ..."), never hanging
 *       and never re-sending into the block.
 *   <li>Re-send what was not taken after a pause, up to {@link PublisherOptions#maxAttempts()} sends;
 *       then throw {@link PublishFailedException} listing it. A re-send may duplicate a message the broker
 *       did take but never confirmed; the seq makes that harmless. A channel the broker nacked on is closed
 *       first, so the re-send goes on a fresh one (RabbitMQ 3.x: a channel that met a quorum queue's leader
 *       down nacks every later publish to that queue, whatever the new leader).
 * </ol>
 * The connection factory must have correlated publisher confirms and publisher returns enabled.
 */
public final class ConfirmingPublisher implements OperationPublisher {
    // This class runs the windows and the re-sends; the rest is split by concern: PendingConfirm (one message's
    // outcome), WindowVerdict (what follows a window), PublisherConnection (whether a message fits the connection,
    // and resetting it after a client-side failure), SendObservation (the observation of one send) and Backoff (the
    // pauses). Not in the Javadoc: they are package-private, and a reader of the API would see bare names.
    private static final Logger log = LoggerFactory.getLogger(ConfirmingPublisher.class);
    /** The observation of one send (see {@link PublisherOptions#observations()}). */
    public static final String PUBLISH = "orderless.publish";

    private final RabbitTemplate template;
    private final BrokerBlocking blocking;
    private final String exchange;
    private final String routingKey;
    private final PublisherOptions options;
    private final Envelope envelope = new Envelope();
    private final PublisherConnection connection;
    private final SendObservation observation;

    private ConfirmingPublisher(RabbitTemplate template, BrokerBlocking blocking, String exchange, String routingKey,
                                PublisherOptions options) {
        this.template = template;
        this.blocking = blocking;
        this.exchange = exchange;
        this.routingKey = routingKey;
        this.options = options;
        this.connection = PublisherConnection.of(template.getConnectionFactory());
        this.observation = new SendObservation(options.observations(), exchange, routingKey);
    }

    /** Publishes straight to {@code queue} through the default exchange; the rest: {@link #builder(ConnectionFactory)}. */
    public static ConfirmingPublisher toQueue(ConnectionFactory connectionFactory, String queue, PublisherOptions options) {
        return builder(connectionFactory).toQueue(queue).options(options).build();
    }

    /** A publisher on {@code connectionFactory}, which must have correlated publisher confirms and returns. */
    public static Builder builder(ConnectionFactory connectionFactory) {
        if (connectionFactory == null) {
            throw new InvalidConfigurationException("publisher: connectionFactory is required");
        }
        return new Builder(new RabbitTemplate(connectionFactory));
    }

    /**
     * A publisher that sends through {@code template}, which it then owns: made with the application's
     * settings (Spring Boot's {@code RabbitTemplateConfigurer}: {@code spring.rabbitmq.template.*}, its send
     * retries, its customizers), on a connection factory with correlated confirms and returns. It is set
     * to mandatory and to the factory's publisher connection.
     */
    public static Builder builder(RabbitTemplate template) {
        if (template == null) {
            throw new InvalidConfigurationException("publisher: template is required");
        }
        return new Builder(template);
    }

    /** Where a publisher sends, how it waits, and which watcher tells it the broker blocks publishers. */
    public static final class Builder {
        private final RabbitTemplate template;
        private Optional<String> exchange = Optional.empty();
        private String routingKey = "";
        private PublisherOptions options = PublisherOptions.ofDefaults();
        private Optional<BrokerBlocking> blocking = Optional.empty();

        private Builder(RabbitTemplate template) {
            this.template = template;
        }

        /** Straight to {@code queue}, through the default exchange. */
        public Builder toQueue(String queue) {
            return toExchange("", queue);
        }

        /** To {@code exchange} with {@code routingKey}; a message the broker cannot route counts as not taken. */
        public Builder toExchange(String exchange, String routingKey) {
            if (exchange == null || routingKey == null) {
                throw new InvalidConfigurationException("publisher: exchange and routingKey must not be null");
            }
            this.exchange = Optional.of(exchange);
            this.routingKey = routingKey;
            return this;
        }

        /** How it waits and retries; {@link PublisherOptions#ofDefaults()} if not set. */
        public Builder options(PublisherOptions options) {
            if (options == null) {
                throw new InvalidConfigurationException("publisher: options must not be null");
            }
            this.options = options;
            return this;
        }

        /**
         * Learns of blocked connections from {@code shared}. The broker says "blocked" once, to the watchers a
         * connection has then: a publisher made later, on a connection the broker already blocks, sees it only
         * through a watcher made earlier, so make one per connection factory at start-up and share it
         * ({@code BrokerBlocking.watch(factory.getPublisherConnectionFactory(), meters, "publisher")}). Without
         * one, the publisher makes its own.
         */
        public Builder blocking(BrokerBlocking shared) {
            if (shared == null) {
                throw new InvalidConfigurationException("publisher: blocking must not be null");
            }
            this.blocking = Optional.of(shared);
            return this;
        }

        /**
         * The publisher, sending where {@code toQueue} or {@code toExchange} said.
         *
         * @return the publisher; close it when done
         * @throws InvalidConfigurationException if no destination was given
         */
        public ConfirmingPublisher build() {
            String to = exchange.orElseThrow(() -> new InvalidConfigurationException(
                    "publisher: no destination: call toQueue(queue) or toExchange(exchange, routingKey)"));
            return ConfirmingPublisher.build(template, to, routingKey, options, blocking);
        }
    }

    private static ConfirmingPublisher build(RabbitTemplate template, String exchange, String routingKey,
                                             PublisherOptions options, Optional<BrokerBlocking> blocking) {
        ConnectionFactory connectionFactory = template.getConnectionFactory();
        if (!connectionFactory.isPublisherConfirms() || !connectionFactory.isPublisherReturns()) {
            throw new InvalidConfigurationException("publisher: the connection factory must have correlated publisher"
                    + " confirms and returns enabled: factory.setPublisherConfirmType(ConfirmType.CORRELATED);"
                    + " factory.setPublisherReturns(true)");
        }
        template.setMandatory(true);
        warnOfUnboundedChannelOpens(connectionFactory, options);
        ConnectionFactory publishing = connectionFactory.getPublisherConnectionFactory();
        template.setUsePublisherConnection(publishing != null);
        BrokerBlocking watcher = blocking.orElseGet(() -> BrokerBlocking.watch(
                publishing != null ? publishing : connectionFactory, options.meters(), "publisher"));
        return new ConfirmingPublisher(template, watcher, exchange, routingKey, options);
    }

    /**
     * While RabbitMQ blocks a connection (a resource alarm), it reads nothing from it: a channel the publisher must
     * open meanwhile (a re-send, while the first channel waits for its confirms) waits for the client's channel RPC
     * timeout, 10 minutes by default, past every bound of the publisher. Said once, at build, naming the setting.
     */
    private static void warnOfUnboundedChannelOpens(ConnectionFactory connectionFactory, PublisherOptions options) {
        if (connectionFactory instanceof org.springframework.amqp.rabbit.connection.AbstractConnectionFactory factory) {
            int rpc = factory.getRabbitConnectionFactory().getChannelRpcTimeout();
            long confirm = options.confirmTimeout().toMillis();
            if (rpc == 0 || rpc > 3 * confirm) {
                log.warn("publisher: the connection factory's channel RPC timeout is {}: while RabbitMQ blocks"
                        + " publishers, opening a channel waits that long, past the confirm timeout ({} ms); set"
                        + " factory.getRabbitConnectionFactory().setChannelRpcTimeout(...) near the confirm timeout"
                        + " (Spring Boot: spring.rabbitmq.channel-rpc-timeout)", rpc == 0 ? "unbounded" : rpc + " ms",
                        confirm);
            }
        }
    }

    /** How this publisher waits and retries. */
    public PublisherOptions options() {
        return options;
    }

    /** Publishes every operation and returns once the broker confirmed all of them. */
    @Override
    public void publishAll(List<? extends Operation> ops) {
        Windows.publish(Outgoing.of(ops, envelope), options.window(), this::publishWindow);
    }

    /**
     * Publishes bodies exactly as given (for tools and tests: a demo that also sends bad input, say), with
     * the same confirms and re-sends.
     */
    @Override
    public void publishRaw(List<byte[]> bodies) {
        Windows.publish(Outgoing.raw(bodies), options.window(), this::publishWindow);
    }

    private void publishWindow(List<Outgoing> pending) {
        Map<Outgoing, String> refused = new LinkedHashMap<>();
        for (int attempt = 1; ; attempt++) {
            long deadline = System.nanoTime() + options.confirmTimeout().toNanos();
            List<PendingConfirm<Outgoing>> sent = new ArrayList<>(pending.size());
            Optional<String> unreachable = Optional.empty();
            for (int i = 0; i < pending.size(); i++) {
                Outgoing next = pending.get(i);
                if (unreachable.isPresent()) {
                    // one connection attempt per attempt, not one per message: the rest fail the same way
                    sent.add(PendingConfirm.notSent(next, new CorrelationData(next.id()), unreachable.get()));
                    continue;
                }
                if (!unblockedBy(deadline)) {
                    throw blocked(sent, pending.subList(i, pending.size()), refused);
                }
                PendingConfirm<Outgoing> one = send(next);
                if (one.refusal().isPresent()) {
                    refused.put(next, one.refusal().get());   // the same message fails the same way: not again
                } else {
                    sent.add(one);
                    // a send that fails (not its confirm) is the connection's trouble: the next would wait as long
                    unreachable = one.sendFailure().map(why -> "not sent: " + why);
                }
            }
            List<Outgoing> notTaken = new ArrayList<>();
            String lastReason = "";
            for (PendingConfirm<Outgoing> s : sent) {
                Optional<String> reason = s.await(Math.max(0, deadline - System.nanoTime()));
                if (reason.isPresent()) {
                    notTaken.add(s.message());
                    lastReason = reason.get();
                }
            }
            switch (WindowVerdict.after(notTaken.size(), refused.size(), blocking.reason().isPresent(), attempt,
                    options.maxAttempts())) {
                case DONE -> {
                    return;
                }
                case REFUSED_ONLY -> throw refusedOnly(refused);
                case BLOCKED -> throw blocked(List.of(), notTaken, refused);
                case GIVE_UP -> {
                    List<Outgoing> failed = new ArrayList<>(notTaken);
                    failed.addAll(refused.keySet());
                    throw new PublishFailedException(notTaken.size() + " operation(s) not taken by the broker after "
                            + attempt + " attempts (last reason: " + lastReason + "); first: " + notTaken.get(0)
                            + refusedSuffix(refused), Outgoing.ops(failed), refusals(refused));
                }
                case RESEND -> {
                    closeChannelsThatNacked(sent);
                    log.warn("{} operation(s) not taken by the broker ({}); sending them again, attempt {} of {}",
                            notTaken.size(), lastReason, attempt + 1, options.maxAttempts());
                    pause(attempt);
                    pending = notTaken;
                }
            }
        }
    }

    private static PublishFailedException refusedOnly(Map<Outgoing, String> refused) {
        Map.Entry<Outgoing, String> first = refused.entrySet().iterator().next();
        return new PublishFailedException(refused.size() + " operation(s) could not be sent at all (the message"
                + " itself, not the broker); first: " + first.getKey() + ": " + first.getValue(),
                Outgoing.ops(List.copyOf(refused.keySet())), refusals(refused));
    }

    private static String refusedSuffix(Map<Outgoing, String> refused) {
        return refused.isEmpty() ? "" : "; " + refused.size() + " more could not be sent at all";
    }

    private static Map<Operation, String> refusals(Map<Outgoing, String> refused) {
        Map<Operation, String> byOp = new LinkedHashMap<>();
        refused.forEach((outgoing, why) -> outgoing.op().ifPresent(op -> byOp.put(op, why)));
        return byOp;
    }

    /** True once the broker does not block publishing, waiting at most until {@code deadline}. */
    private boolean unblockedBy(long deadline) {
        try {
            return blocking.awaitUnblocked(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PublishFailedException("interrupted while the broker blocks publishers", List.of());
        }
    }

    /** The block outlasted the confirm timeout: everything not confirmed yet is reported, nothing dropped. */
    private BrokerBlockedException blocked(List<PendingConfirm<Outgoing>> sent, List<Outgoing> unsent,
                                           Map<Outgoing, String> refused) {
        List<Outgoing> notConfirmed = new ArrayList<>();
        for (PendingConfirm<Outgoing> s : sent) {
            if (s.await(0).isPresent()) {
                notConfirmed.add(s.message());
            }
        }
        notConfirmed.addAll(unsent);
        notConfirmed.addAll(refused.keySet());
        String reason = blocking.reason().orElse("blocked");
        return new BrokerBlockedException(reason, "broker is blocking publishers: " + reason + "; "
                + notConfirmed.size() + " operation(s) not confirmed within " + options.confirmTimeout().toMillis()
                + " ms (first: " + (notConfirmed.isEmpty() ? "none" : notConfirmed.get(0)) + "); they were not"
                + " dropped: publish them again once the alarm clears", Outgoing.ops(notConfirmed));
    }


    /**
     * Sends one message, unless the message itself cannot be sent: then it is refused before it touches
     * the channel ({@link PublisherConnection}).
     */
    private PendingConfirm<Outgoing> send(Outgoing outgoing) {
        MessageProperties properties = new MessageProperties();
        CorrelationData correlation = new CorrelationData(outgoing.id());
        Observation observed = observation.start(properties, outgoing.op());   // tracing headers written now
        try (Observation.Scope scope = observed.openScope()) {
            Message message = MessageBuilder.withBody(outgoing.body())
                    .andProperties(properties)
                    .setContentType(Envelope.CONTENT_TYPE)
                    .setDeliveryMode(MessageDeliveryMode.PERSISTENT)
                    .setMessageId(outgoing.id())
                    .build();
            Optional<String> unsendable = connection.unsendable(message, correlation);
            if (unsendable.isPresent()) {
                observed.error(new IllegalArgumentException(unsendable.get()));
                return PendingConfirm.refused(outgoing, correlation, unsendable.get());
            }
            if (template.getConnectionFactory() instanceof AbstractRoutingConnectionFactory) {
                // the template chooses the factory per message: send as it does (the channel stays unknown)
                template.send(exchange, routingKey, message, correlation);
                return PendingConfirm.sent(outgoing, correlation);
            }
            // as template.send does, keeping the channel it sent on: a nacked message is re-sent on another one
            Channel on = template.execute(channel -> {
                template.doSend(channel, exchange, routingKey, message,
                        !Boolean.FALSE.equals(template.isMandatoryFor(message)), correlation);
                return channel instanceof ChannelProxy proxy ? proxy.getTargetChannel() : channel;
            });
            return PendingConfirm.sent(outgoing, correlation, on);
        } catch (AmqpException e) {
            observed.error(e);
            if (PublisherConnection.clientSide(e)) {
                // the client numbered this publish for its confirm before it failed: no channel of this
                // publisher may be used again
                connection.reset();
                return PendingConfirm.refused(outgoing, correlation, "the client could not send it: " + e.getMessage());
            }
            return PendingConfirm.notSent(outgoing, correlation, "send failed: " + e.getMessage());
        } finally {
            observed.stop();
        }
    }

    /**
     * Closes the channels the broker nacked messages on, so that the re-send goes on a fresh one (the connection
     * factory's cache opens it). RabbitMQ 3.x keeps, per channel, a client of each quorum queue the channel
     * published to: a channel whose first publish to the queue met its leader down (killed, cut off) keeps that
     * leader and nacks every later publish to the queue, even once a new leader serves it, while a new channel
     * publishes to the new leader. Other messages in flight on a closed channel are nacked and re-sent by their
     * publishers (the seq makes the copies harmless).
     */
    private static void closeChannelsThatNacked(List<PendingConfirm<Outgoing>> sent) {
        java.util.Set<Channel> nacking = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (PendingConfirm<Outgoing> s : sent) {
            if (s.nacked()) {
                s.channel().ifPresent(nacking::add);
            }
        }
        for (Channel channel : nacking) {
            if (channel.isOpen()) {
                log.info("publisher: the broker nacked messages on channel {}; closing it so that they are re-sent on"
                        + " a fresh channel", channel.getChannelNumber());
                try {
                    channel.close();
                } catch (java.io.IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
                    // closed meanwhile, or its connection is gone: either way it is not used again
                }
            }
        }
    }

    /** The pause after the {@code attempt}th send of a window the broker did not take all of. */
    private void pause(int attempt) {
        try {
            Thread.sleep(options.backoff().pause(attempt).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PublishFailedException("interrupted while re-sending", List.of());
        }
    }
}
