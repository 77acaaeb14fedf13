package dev.orderless.publish;

import dev.orderless.apply.Operation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.MessageProperties;

/**
 * The {@value ConfirmingPublisher#PUBLISH} observation of one send: a sender whose tracing handler writes
 * the trace context into the message's headers when it starts. Tracing is not the message's business: an
 * observation that fails to start leaves the message untraced, said once per kind of failure at WARN,
 * never failing the send.
 */
final class SendObservation {
    private static final Logger log = LoggerFactory.getLogger(SendObservation.class);

    private final ObservationRegistry registry;
    private final String exchange;
    private final String routingKey;
    private final Set<String> failuresSeen = ConcurrentHashMap.newKeySet();

    SendObservation(ObservationRegistry registry, String exchange, String routingKey) {
        this.registry = registry;
        this.exchange = exchange;
        this.routingKey = routingKey;
    }

    /** The observation of sending {@code op} (empty for raw bodies) with {@code properties}, started. */
    Observation start(MessageProperties properties, Optional<Operation> op) {
        SenderContext<MessageProperties> context = new SenderContext<>((carrier, key, value) -> carrier.setHeader(key, value));
        context.setCarrier(properties);
        context.setRemoteServiceName("RabbitMQ");
        Observation observation = Observation.createNotStarted(ConfirmingPublisher.PUBLISH, () -> context, registry)
                .contextualName((exchange.isEmpty() ? routingKey : exchange) + " send")
                .lowCardinalityKeyValue("orderless.exchange", exchange)
                .lowCardinalityKeyValue("orderless.routing_key", routingKey);
        op.ifPresent(o -> observation.highCardinalityKeyValue("orderless.entity", o.entity())
                .highCardinalityKeyValue("orderless.seq", Long.toString(o.seq())));
        try {
            return observation.start();
        } catch (RuntimeException e) {
            if (failuresSeen.add(e.getClass().getName())) {
                log.warn("publisher: starting the '{}' observation failed ({}); messages are sent untraced while it"
                        + " fails", ConfirmingPublisher.PUBLISH, e.toString());
            }
            return Observation.NOOP;
        }
    }
}
