package dev.orderless.demo.compare;

import dev.orderless.message.Envelope;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.transport.ReceiverContext;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.amqp.core.Message;

/**
 * Watches the orderless consumer through its {@code orderless.consume} observation, as a user's tracing
 * would: records each message once it is settled (applied, superseded or a duplicate), from the entity and
 * seq the consumer puts on the observation, and plays the stuck-handler fault when a message arrives (the
 * only time it reads the message itself). The consumer is the one users run, untouched: on RabbitMQ (the carrier
 * a Spring AMQP message, its index in a header) and on Kafka (orderless's share-group consumer: the carrier a
 * record, its index from its seq).
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
        } else if (context.getCarrier() instanceof ConsumerRecord<?, ?> record) {
            // Kafka's share-group consumer: the record is the carrier, its value the envelope
            tally.handledBy(process);
            if (stuck.armed() && record.value() instanceof byte[] body) {
                stuck.maybe(envelope.decode(body).entity());
            }
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
        // written (or found already written) in MongoDB: applied, whether or not its ack reached the broker
        if (context.getCarrier() instanceof Message message) {
            tally.applied(Arena.index(message), entity.getValue(), s, System.nanoTime());
        } else if (context.getCarrier() instanceof ConsumerRecord<?, ?>) {
            tally.applied(KafkaArena.index(s), entity.getValue(), s, System.nanoTime());
        }
    }
}
