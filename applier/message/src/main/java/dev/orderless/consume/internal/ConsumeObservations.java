package dev.orderless.consume.internal;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Micrometer observations of the consumer, so a trace crosses publish, broker and apply:
 * <ul>
 *   <li>{@value #CONSUME}, one per message, from its delivery to its settling (ack, dead letter or hand
 *       back), as a receiver: a tracing handler continues the trace whose context the publisher put in the
 *       message's headers. Low-cardinality keys: {@code orderless.queue}, {@code orderless.outcome}
 *       (applied, superseded, duplicate, collision, dead_lettered, requeued); high: the entity and seq.
 *   <li>{@value #APPLY}, one per MongoDB apply, inside it. In batch mode each message of a bulk has its
 *       own, a child of its {@value #CONSUME}, spanning the bulk write ({@code orderless.batch=true},
 *       {@code orderless.operations} the bulk's size): a trace shows the apply its message waited on.
 * </ul>
 * Spring AMQP creates no observation for a batch listener (its documentation: "observations are NOT
 * created for Batch Listener Containers"), so orderless makes its own, one per message of the batch; each
 * ends when its batch is settled, the time its consumer thread spent on it.
 * With no registry given, {@link ObservationRegistry#NOOP}: nothing is recorded, nothing is allocated.
 */
public final class ConsumeObservations {
    public static final String CONSUME = "orderless.consume";
    public static final String APPLY = "orderless.apply";

    private final ObservationRegistry registry;
    private final String queue;

    public ConsumeObservations(ObservationRegistry registry, String queue) {
        this.registry = registry;
        this.queue = queue;
    }

    /** Starts the observation of one delivered message; the caller stops it once the message is settled. */
    Observation consume(Delivery delivery) {
        return Observation.createNotStarted(CONSUME, () -> receiving(delivery), registry)
                .contextualName(queue + " process")
                .lowCardinalityKeyValue("orderless.queue", queue)
                .start();
    }

    /** Names how the current message ended, on the {@value #CONSUME} observation in scope (if any). */
    void outcome(String outcome) {
        Observation current = registry.getCurrentObservation();
        if (current != null && CONSUME.equals(current.getContext().getName())) {
            current.lowCardinalityKeyValue("orderless.outcome", outcome);
        }
    }

    /** Adds the entity and seq of the message in scope, once decoded. */
    void operation(String entity, long seq) {
        Observation current = registry.getCurrentObservation();
        if (current != null && CONSUME.equals(current.getContext().getName())) {
            current.highCardinalityKeyValue("orderless.entity", entity);
            current.highCardinalityKeyValue("orderless.seq", Long.toString(seq));
        }
    }

    /** Runs the apply of the message in scope inside a {@value #APPLY} observation. */
    <T> T apply(Supplier<T> apply) {
        return Observation.createNotStarted(APPLY, registry)
                .lowCardinalityKeyValue("orderless.queue", queue)
                .lowCardinalityKeyValue("orderless.batch", "false")
                .highCardinalityKeyValue("orderless.operations", "1")
                .observe(apply);
    }

    /**
     * Runs one bulk apply of the messages observed by {@code consumes}, with an {@value #APPLY} child of each
     * spanning it.
     */
    <T> T applyBulk(List<Observation> consumes, Supplier<T> apply) {
        List<Observation> applies = new ArrayList<>(consumes.size());
        for (Observation consume : consumes) {
            applies.add(Observation.createNotStarted(APPLY, registry).parentObservation(consume)
                    .lowCardinalityKeyValue("orderless.queue", queue)
                    .lowCardinalityKeyValue("orderless.batch", "true")
                    .highCardinalityKeyValue("orderless.operations", Integer.toString(consumes.size()))
                    .start());
        }
        try {
            return apply.get();
        } catch (RuntimeException e) {
            applies.forEach(a -> a.error(e));
            throw e;
        } finally {
            applies.forEach(Observation::stop);
        }
    }

    /** The carrier is the protocol's message ({@link Delivery#message()}); its headers are read through the delivery. */
    private static ReceiverContext<Object> receiving(Delivery delivery) {
        ReceiverContext<Object> context = new ReceiverContext<>((carrier, key) -> delivery.header(key).orElse(null));
        context.setCarrier(delivery.message());
        context.setRemoteServiceName("RabbitMQ");
        return context;
    }
}
