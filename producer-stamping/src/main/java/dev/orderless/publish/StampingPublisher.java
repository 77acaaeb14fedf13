package dev.orderless.publish;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.Operation;
import dev.orderless.stamp.Stamper;
import java.util.function.LongFunction;

/**
 * Stamps, then publishes and waits until the broker took it (over AMQP 0-9-1 or 1.0, see
 * {@link OperationPublisher}): what a web application calls instead of writing to MongoDB.
 *
 * <pre>
 * publisher.publish("student-17", seq -&gt; Operation.add("student-17", seq, "classes", "CS 101"));
 * </pre>
 */
public final class StampingPublisher {
    private final Stamper stamper;
    private final OperationPublisher publisher;

    /**
     * Stamps with {@code stamper}, publishes with {@code publisher}.
     *
     * @param stamper   gives each operation its seq
     * @param publisher sends it and waits until the broker took it
     * @throws InvalidConfigurationException if either is missing
     */
    public StampingPublisher(Stamper stamper, OperationPublisher publisher) {
        if (stamper == null || publisher == null) {
            throw new InvalidConfigurationException("stamping publisher: stamper and publisher are required");
        }
        this.stamper = stamper;
        this.publisher = publisher;
    }

    /**
     * Stamps the next seq for {@code entity}, builds the operation with it, publishes it and waits until the
     * broker took it.
     *
     * @return the operation as published
     * @throws PublishFailedException if the broker did not take it
     */
    public Operation publish(String entity, LongFunction<? extends Operation> at) {
        long seq = stamper.next(entity);
        Operation op = at.apply(seq);
        if (!op.entity().equals(entity) || op.seq() != seq) {
            throw new IllegalArgumentException("the operation must be for '" + entity + "' with the stamped seq " + seq
                    + ", was " + op);
        }
        publisher.publish(op);
        return op;
    }
}
