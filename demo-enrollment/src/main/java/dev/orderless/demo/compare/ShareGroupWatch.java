package dev.orderless.demo.compare;

import dev.orderless.message.Envelope;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.transport.ReceiverContext;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Watches the orderless share-group consumer through its {@code orderless.consume} observation, as
 * {@link OrderlessWatch} does on RabbitMQ: records each record once it is settled in MongoDB (applied, superseded
 * or a duplicate), and plays the stuck-handler fault when a record arrives. The consumer is the one users run,
 * untouched.
 */
final class ShareGroupWatch implements ObservationHandler<ReceiverContext<?>> {
    /** Outcomes that leave the record unsettled in MongoDB: not applied (yet). */
    private static final Set<String> NOT_DONE = Set.of("dead_lettered", "requeued", "released", "retried", "held");

    private final Tally tally;
    private final Stuck stuck;
    private final int process;
    private final Envelope envelope = new Envelope();

    ShareGroupWatch(Tally tally, Stuck stuck, int process) {
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
        tally.handledBy(process);
        if (stuck.armed() && context.getCarrier() instanceof ConsumerRecord<?, ?> record
                && record.value() instanceof byte[] body) {
            stuck.maybe(envelope.decode(body).entity());
        }
    }

    @Override
    public void onStop(ReceiverContext<?> context) {
        KeyValue outcome = context.getLowCardinalityKeyValue("orderless.outcome");
        KeyValue entity = context.getHighCardinalityKeyValue("orderless.entity");
        KeyValue seq = context.getHighCardinalityKeyValue("orderless.seq");
        if (outcome == null || entity == null || seq == null || NOT_DONE.contains(outcome.getValue())) {
            return;
        }
        long s = Long.parseLong(seq.getValue());
        tally.applied(KafkaArena.index(s), entity.getValue(), s, System.nanoTime());
    }
}
