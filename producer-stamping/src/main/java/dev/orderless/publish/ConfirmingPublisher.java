package dev.orderless.publish;

import dev.orderless.InvalidConfigurationException;
import com.rabbitmq.client.AMQP;
import dev.orderless.amqp.BrokerBlocking;
import dev.orderless.amqp.internal.AmqpEncoding;
import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import io.micrometer.observation.Observation;
import io.micrometer.observation.transport.SenderContext;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;
import org.springframework.amqp.rabbit.connection.PublisherCallbackChannel;

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
 *       did take but never confirmed; the seq makes that harmless.
 * </ol>
 * The connection factory must have correlated publisher confirms and publisher returns enabled.
 */
public final class ConfirmingPublisher {
    private static final Logger log = LoggerFactory.getLogger(ConfirmingPublisher.class);
    /** The observation of one send (see {@link PublisherOptions#observations()}). */
    public static final String PUBLISH = "orderless.publish";

    private final RabbitTemplate template;
    private final BrokerBlocking blocking;
    private final String exchange;
    private final String routingKey;
    private final PublisherOptions options;
    private final Envelope envelope = new Envelope();
    private final MessagePropertiesConverter converter = new DefaultMessagePropertiesConverter();
    /** The publisher connection's frame_max, as its connections report it; RabbitMQ's default until one does. */
    private volatile int frameMax = AmqpEncoding.DEFAULT_FRAME_MAX;
    private final java.util.Set<String> observationFailures = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final int HEADROOM = 1024;

    private ConfirmingPublisher(RabbitTemplate template, BrokerBlocking blocking, String exchange, String routingKey,
                                PublisherOptions options) {
        this.template = template;
        this.blocking = blocking;
        this.exchange = exchange;
        this.routingKey = routingKey;
        this.options = options;
        ConnectionFactory factory = template.getConnectionFactory();
        ConnectionFactory publishing = factory.getPublisherConnectionFactory();
        (publishing != null ? publishing : factory).addConnectionListener(connection -> {
            int max = connection.getDelegate().getFrameMax();
            frameMax = max > 0 ? max : Integer.MAX_VALUE - HEADROOM;   // 0: no limit
        });
    }

    /** Publishes straight to {@code queue} through the default exchange. */
    public static ConfirmingPublisher toQueue(ConnectionFactory connectionFactory, String queue, PublisherOptions options) {
        return create(connectionFactory, "", queue, options);
    }

    /** As {@link #toQueue(ConnectionFactory, String, PublisherOptions)}, sharing a watcher of the factory's connections. */
    public static ConfirmingPublisher toQueue(ConnectionFactory connectionFactory, String queue, PublisherOptions options,
                                              BrokerBlocking blocking) {
        return create(connectionFactory, "", queue, options, blocking);
    }

    /** A publisher with its own {@link BrokerBlocking} watcher on the factory's publisher connection. */
    public static ConfirmingPublisher create(ConnectionFactory connectionFactory, String exchange, String routingKey,
                                             PublisherOptions options) {
        return create(connectionFactory, exchange, routingKey, options, null);
    }

    /**
     * A publisher that learns of blocked connections from {@code blocking}. The broker says "blocked" once,
     * to the watchers a connection has then: a publisher made later, on a connection the broker already
     * blocks, sees it only through a watcher made earlier, so make one per connection factory at start-up
     * and share it ({@code BrokerBlocking.watch(factory.getPublisherConnectionFactory(), meters, "publisher")}).
     * Null makes one.
     */
    public static ConfirmingPublisher create(ConnectionFactory connectionFactory, String exchange, String routingKey,
                                             PublisherOptions options, BrokerBlocking blocking) {
        if (connectionFactory == null || exchange == null || routingKey == null || options == null) {
            throw new InvalidConfigurationException("publisher: connectionFactory, exchange, routingKey and options are required");
        }
        return on(new RabbitTemplate(connectionFactory), exchange, routingKey, options, blocking);
    }

    /**
     * A publisher that sends through {@code template}, which it then owns: made with the application's
     * settings (Spring Boot's {@code RabbitTemplateConfigurer}: {@code spring.rabbitmq.template.*}, its send
     * retries, its customizers), on a connection factory with correlated confirms and returns. It is set
     * to mandatory and to the factory's publisher connection.
     */
    public static ConfirmingPublisher on(RabbitTemplate template, String exchange, String routingKey,
                                         PublisherOptions options, BrokerBlocking blocking) {
        if (template == null || exchange == null || routingKey == null || options == null) {
            throw new InvalidConfigurationException("publisher: template, exchange, routingKey and options are required");
        }
        ConnectionFactory connectionFactory = template.getConnectionFactory();
        if (!connectionFactory.isPublisherConfirms() || !connectionFactory.isPublisherReturns()) {
            throw new InvalidConfigurationException("publisher: the connection factory must have correlated publisher"
                    + " confirms and returns enabled: factory.setPublisherConfirmType(ConfirmType.CORRELATED);"
                    + " factory.setPublisherReturns(true)");
        }
        template.setMandatory(true);
        ConnectionFactory publishing = connectionFactory.getPublisherConnectionFactory();
        template.setUsePublisherConnection(publishing != null);
        BrokerBlocking watcher = blocking != null ? blocking
                : BrokerBlocking.watch(publishing != null ? publishing : connectionFactory, options.meters(), "publisher");
        return new ConfirmingPublisher(template, watcher, exchange, routingKey, options);
    }

    /** How this publisher waits and retries. */
    public PublisherOptions options() {
        return options;
    }

    /** Publishes one operation and returns once the broker confirmed it. */
    public void publish(Operation op) {
        publishAll(List.of(op));
    }

    /** Publishes every operation and returns once the broker confirmed all of them. */
    public void publishAll(List<? extends Operation> ops) {
        List<Outgoing> outgoing = new ArrayList<>(ops.size());
        ops.forEach(op -> outgoing.add(new Outgoing(MessageIds.of(op), envelope.encode(op), op)));
        publish(outgoing);
    }

    /**
     * Publishes bodies exactly as given (for tools and tests: a demo that also sends bad input, say), with
     * the same confirms and re-sends.
     */
    public void publishRaw(List<byte[]> bodies) {
        List<Outgoing> outgoing = new ArrayList<>(bodies.size());
        for (int i = 0; i < bodies.size(); i++) {
            outgoing.add(new Outgoing("raw-" + i, bodies.get(i), null));
        }
        publish(outgoing);
    }

    /** One message to send: a correlation id, its body, and the operation it carries (null for raw bodies). */
    private record Outgoing(String id, byte[] body, Operation op) {
        @Override
        public String toString() {
            return op != null ? op.toString() : id;
        }
    }

    /** Window by window; once one fails, the windows after it are reported as not sent, never as taken. */
    private void publish(List<Outgoing> outgoing) {
        for (int from = 0; from < outgoing.size(); from += options.window()) {
            int to = Math.min(outgoing.size(), from + options.window());
            try {
                publishWindow(new ArrayList<>(outgoing.subList(from, to)));
            } catch (PublishFailedException e) {
                if (to == outgoing.size()) {
                    throw e;
                }
                throw withUnsent(e, outgoing.subList(to, outgoing.size()));
            }
        }
    }

    private static PublishFailedException withUnsent(PublishFailedException e, List<Outgoing> unsent) {
        List<Operation> failed = new ArrayList<>(e.failed());
        failed.addAll(ops(unsent));
        String message = e.getMessage() + "; the " + unsent.size() + " operation(s) after that window were not sent";
        return e instanceof BrokerBlockedException b
                ? new BrokerBlockedException(b.brokerReason(), message, failed)
                : new PublishFailedException(message, failed, e.refused());
    }

    private void publishWindow(List<Outgoing> pending) {
        Map<Outgoing, String> refused = new LinkedHashMap<>();
        for (int attempt = 1; ; attempt++) {
            long deadline = System.nanoTime() + options.confirmTimeout().toNanos();
            List<Sent> sent = new ArrayList<>(pending.size());
            String unreachable = null;
            for (int i = 0; i < pending.size(); i++) {
                if (unreachable != null) {
                    // one connection attempt per attempt, not one per message: the rest fail the same way
                    sent.add(new Sent(pending.get(i), null, unreachable, null));
                    continue;
                }
                if (!unblockedBy(deadline)) {
                    throw blocked(sent, pending.subList(i, pending.size()), refused);
                }
                Sent one = send(pending.get(i));
                if (one.refusal() != null) {
                    refused.put(one.message(), one.refusal());   // the same message fails the same way: not again
                } else {
                    sent.add(one);
                    // a send that fails (not its confirm) is the connection's trouble: the next would wait as long
                    unreachable = one.sendFailure() != null ? "not sent: " + one.sendFailure() : null;
                }
            }
            List<Outgoing> notTaken = new ArrayList<>();
            String lastReason = null;
            for (Sent s : sent) {
                String reason = s.await(Math.max(0, deadline - System.nanoTime()));
                if (reason != null) {
                    notTaken.add(s.message());
                    lastReason = reason;
                }
            }
            if (notTaken.isEmpty() && refused.isEmpty()) {
                return;
            }
            if (notTaken.isEmpty()) {
                throw refusedOnly(refused);
            }
            if (blocking.reason().isPresent()) {
                // the broker said it blocks: re-sending into the block cannot help within this call
                throw blocked(List.of(), notTaken, refused);
            }
            if (attempt >= options.maxAttempts()) {
                List<Outgoing> failed = new ArrayList<>(notTaken);
                failed.addAll(refused.keySet());
                throw new PublishFailedException(notTaken.size() + " operation(s) not taken by the broker after "
                        + attempt + " attempts (last reason: " + lastReason + "); first: " + notTaken.get(0)
                        + refusedSuffix(refused), ops(failed), refusals(refused));
            }
            log.warn("{} operation(s) not taken by the broker ({}); sending them again, attempt {} of {}",
                    notTaken.size(), lastReason, attempt + 1, options.maxAttempts());
            pause(attempt);
            pending = notTaken;
        }
    }

    private static PublishFailedException refusedOnly(Map<Outgoing, String> refused) {
        Map.Entry<Outgoing, String> first = refused.entrySet().iterator().next();
        return new PublishFailedException(refused.size() + " operation(s) could not be sent at all (the message"
                + " itself, not the broker); first: " + first.getKey() + ": " + first.getValue(),
                ops(List.copyOf(refused.keySet())), refusals(refused));
    }

    private static String refusedSuffix(Map<Outgoing, String> refused) {
        return refused.isEmpty() ? "" : "; " + refused.size() + " more could not be sent at all";
    }

    private static Map<Operation, String> refusals(Map<Outgoing, String> refused) {
        Map<Operation, String> byOp = new LinkedHashMap<>();
        refused.forEach((outgoing, why) -> {
            if (outgoing.op() != null) {
                byOp.put(outgoing.op(), why);
            }
        });
        return byOp;
    }

    /** True once the broker does not block publishing, waiting at most until {@code deadline}. */
    private boolean unblockedBy(long deadline) {
        try {
            return blocking.awaitUnblocked(java.time.Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PublishFailedException("interrupted while the broker blocks publishers", List.of());
        }
    }

    /** The block outlasted the confirm timeout: everything not confirmed yet is reported, nothing dropped. */
    private BrokerBlockedException blocked(List<Sent> sent, List<Outgoing> unsent, Map<Outgoing, String> refused) {
        List<Outgoing> notConfirmed = new ArrayList<>();
        for (Sent s : sent) {
            if (s.await(0) != null) {
                notConfirmed.add(s.message());
            }
        }
        notConfirmed.addAll(unsent);
        notConfirmed.addAll(refused.keySet());
        String reason = blocking.reason().orElse("blocked");
        return new BrokerBlockedException(reason, "broker is blocking publishers: " + reason + "; "
                + notConfirmed.size() + " operation(s) not confirmed within " + options.confirmTimeout().toMillis()
                + " ms (first: " + (notConfirmed.isEmpty() ? "none" : notConfirmed.get(0)) + "); they were not"
                + " dropped: publish them again once the alarm clears", ops(notConfirmed));
    }

    private static List<Operation> ops(List<Outgoing> outgoing) {
        return outgoing.stream().map(Outgoing::op).filter(java.util.Objects::nonNull).toList();
    }

    /**
     * Sends one message, unless the message itself cannot be sent: then it is refused before it touches
     * the channel. That matters beyond this message: the client numbers a publish for its confirm before
     * it encodes it, so an encoding failure on the channel would leave every later confirm credited to
     * the message before it.
     */
    private Sent send(Outgoing outgoing) {
        MessageProperties properties = new MessageProperties();
        SenderContext<MessageProperties> context = new SenderContext<>((carrier, key, value) -> carrier.setHeader(key, value));
        context.setCarrier(properties);
        context.setRemoteServiceName("RabbitMQ");
        Observation observation = Observation.createNotStarted(PUBLISH, () -> context, options.observations())
                .contextualName((exchange.isEmpty() ? routingKey : exchange) + " send")
                .lowCardinalityKeyValue("orderless.exchange", exchange)
                .lowCardinalityKeyValue("orderless.routing_key", routingKey);
        if (outgoing.op() != null) {
            observation.highCardinalityKeyValue("orderless.entity", outgoing.op().entity())
                    .highCardinalityKeyValue("orderless.seq", Long.toString(outgoing.op().seq()));
        }
        CorrelationData correlation = new CorrelationData(outgoing.id());
        try {
            observation.start();   // a tracing handler writes the trace context into the headers now
        } catch (RuntimeException e) {
            // tracing is not the message's business: send it untraced, and say so once per kind of failure
            if (observationFailures.add(e.getClass().getName())) {
                log.warn("publisher: starting the '{}' observation failed ({}); messages are sent untraced while it"
                        + " fails", PUBLISH, e.toString());
            }
            observation = Observation.NOOP;
        }
        try (Observation.Scope scope = observation.openScope()) {
            Message message = MessageBuilder.withBody(outgoing.body())
                    .andProperties(properties)
                    .setContentType(Envelope.CONTENT_TYPE)
                    .setDeliveryMode(MessageDeliveryMode.PERSISTENT)
                    .setMessageId(outgoing.id())
                    .build();
            Optional<String> unsendable = unsendable(message, correlation);
            if (unsendable.isPresent()) {
                observation.error(new IllegalArgumentException(unsendable.get()));
                return Sent.refused(outgoing, correlation, unsendable.get());
            }
            template.send(exchange, routingKey, message, correlation);
            return new Sent(outgoing, correlation, null, null);
        } catch (AmqpException e) {
            observation.error(e);
            if (clientSide(e)) {
                // the client numbered this publish for its confirm before it failed: the channel's confirms no
                // longer match its messages, so no channel of this publisher may be used again
                resetChannels();
                return Sent.refused(outgoing, correlation, "the client could not send it: " + e.getMessage());
            }
            return new Sent(outgoing, correlation, "send failed: " + e.getMessage(), null);
        } finally {
            observation.stop();
        }
    }

    /** A failure of the client with this message (it threw while encoding), not of the connection. */
    private static boolean clientSide(AmqpException e) {
        Throwable cause = e.getCause();
        return e instanceof org.springframework.amqp.UncategorizedAmqpException
                && (cause instanceof IllegalArgumentException || cause instanceof IllegalStateException);
    }

    private void resetChannels() {
        ConnectionFactory factory = template.getConnectionFactory();
        ConnectionFactory publishing = factory.getPublisherConnectionFactory();
        ConnectionFactory used = publishing != null ? publishing : factory;
        if (used instanceof org.springframework.amqp.rabbit.connection.CachingConnectionFactory caching) {
            caching.resetConnection();
        } else {
            log.warn("publisher: a message failed on its channel after being numbered for its confirm, and the"
                    + " connection factory ({}) cannot be reset: later confirms on that channel may be misattributed",
                    used.getClass().getSimpleName());
        }
    }

    /**
     * Why the client could not send {@code message}, as the template would send it, if it could not. The
     * template adds a few headers of its own after this check (a return correlation, its observation's):
     * {@value #HEADROOM} bytes of the frame are left for them.
     */
    private Optional<String> unsendable(Message message, CorrelationData correlation) {
        MessageProperties properties = message.getMessageProperties();
        try {
            AMQP.BasicProperties encoded = converter.fromMessageProperties(properties, "UTF-8");
            Map<String, Object> headers = new HashMap<>(encoded.getHeaders() == null ? Map.of() : encoded.getHeaders());
            headers.put(PublisherCallbackChannel.RETURNED_MESSAGE_CORRELATION_KEY, correlation.getId());   // the template adds it
            return AmqpEncoding.unsendable(encoded.builder().headers(headers).build(), message.getBody().length,
                    frameMax - HEADROOM);
        } catch (RuntimeException e) {
            return Optional.of("its properties cannot be converted: " + e);
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

    /**
     * One message on its way: its outcome is null once confirmed and routed, else why not. A refused one
     * never reached the channel.
     */
    private record Sent(Outgoing message, CorrelationData correlation, String sendFailure, String refusal) {
        static Sent refused(Outgoing message, CorrelationData correlation, String why) {
            return new Sent(message, correlation, null, why);
        }

        String await(long timeoutNanos) {
            if (refusal != null) {
                return refusal;
            }
            if (sendFailure != null) {
                return sendFailure;
            }
            try {
                CorrelationData.Confirm confirm = correlation.getFuture().get(timeoutNanos, TimeUnit.NANOSECONDS);
                // a return says more than the nack some brokers send with it, so it is reported first
                ReturnedMessage returned = correlation.getReturned();
                if (returned != null) {
                    return "returned: " + returned.getReplyText() + " (" + returned.getReplyCode() + ") to exchange '"
                            + returned.getExchange() + "' with routing key '" + returned.getRoutingKey() + "'";
                }
                if (confirm.ack()) {
                    return null;
                }
                return "nacked by the broker" + (confirm.reason() == null ? "" : ": " + confirm.reason());
            } catch (TimeoutException e) {
                return "no confirm within the window's confirm timeout";
            } catch (ExecutionException e) {
                return "confirm failed: " + e.getCause();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
    }
}
