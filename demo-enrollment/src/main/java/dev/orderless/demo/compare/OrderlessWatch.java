package dev.orderless.demo.compare;

import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.transport.ReceiverContext;
import java.util.Set;
import org.springframework.amqp.core.Message;

/**
 * Watches the orderless consumer through its {@code orderless.consume} observation, as a user's tracing
 * would: records each message once it is settled (applied, superseded or a duplicate), and plays the
 * stuck-handler fault when a message arrives. The consumer itself is the one users run, untouched.
 */
final class OrderlessWatch implements ObservationHandler<ReceiverContext<?>> {
    private static final Set<String> NOT_DONE = Set.of("dead_lettered", "requeued");

    private final Tally tally;
    private final Stuck stuck;
    private final ConsumerProcess process;
    private final Envelope envelope = new Envelope();

    OrderlessWatch(Tally tally, Stuck stuck, ConsumerProcess process) {
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
        if (context.getCarrier() instanceof Message message && !process.killed()) {
            Operation op = envelope.decode(message.getBody());
            if (message.getMessageProperties().isRedelivered()) {
                tally.faulty(op.entity());
            }
            stuck.maybe(op.entity());
        }
    }

    @Override
    public void onStop(ReceiverContext<?> context) {
        KeyValue outcome = context.getLowCardinalityKeyValue("orderless.outcome");
        if (process.killed() || outcome == null || NOT_DONE.contains(outcome.getValue())
                || !(context.getCarrier() instanceof Message message)) {
            return;
        }
        Operation op = envelope.decode(message.getBody());
        tally.applied(Arena.index(message), op.entity(), op.seq(), System.nanoTime());
    }
}
