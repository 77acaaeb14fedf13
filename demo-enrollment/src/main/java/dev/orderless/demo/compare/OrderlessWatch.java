package dev.orderless.demo.compare;

import dev.orderless.message.Envelope;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.transport.ReceiverContext;
import java.util.Set;
import org.springframework.amqp.core.Message;

/**
 * Watches the orderless consumer through its {@code orderless.consume} observation, as a user's tracing
 * would: records each message once it is settled (applied, superseded or a duplicate), from the entity and
 * seq the consumer puts on the observation, and plays the stuck-handler fault when a message arrives (the
 * only time it reads the message itself). The consumer is the one users run, untouched.
 */
final class OrderlessWatch implements ObservationHandler<ReceiverContext<?>> {
    private static final Set<String> NOT_DONE = Set.of("dead_lettered", "requeued");

    private final Tally tally;
    private final Stuck stuck;
    private final int process;
    private final Envelope envelope = new Envelope();

    OrderlessWatch(Tally tally, Stuck stuck, int process) {
        this.tally = tally;
        this.stuck = stuck;
        this.process = process;
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
        return context instanceof ReceiverContext<?> && "orderless.consume".equals(context.getName());
    }

    @Override
    public void onStart(ReceiverContext<?> context) {
        if (context.getCarrier() instanceof Message message) {
            tally.handledBy(process);
            if (message.getMessageProperties().isRedelivered()) {
                tally.redelivered(Arena.index(message));
            }
            if (stuck.armed()) {
                stuck.maybe(envelope.decode(message.getBody()).entity());
            }
        }
    }

    @Override
    public void onStop(ReceiverContext<?> context) {
        KeyValue outcome = context.getLowCardinalityKeyValue("orderless.outcome");
        KeyValue entity = context.getHighCardinalityKeyValue("orderless.entity");
        KeyValue seq = context.getHighCardinalityKeyValue("orderless.seq");
        if (outcome == null || entity == null || seq == null || NOT_DONE.contains(outcome.getValue())
                || !(context.getCarrier() instanceof Message message)) {
            return;
        }
        // written (or found already written) in MongoDB: applied, whether or not its ack reached the broker
        tally.applied(Arena.index(message), entity.getValue(), Long.parseLong(seq.getValue()), System.nanoTime());
    }
}
