package dev.orderless.testing.chaos;

import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * Starts one consumer of a chaos run, built the way the team builds its own (its decoder, options, container
 * factory, history, or a listener of its own): the run calls it once per consumer, and again for each one it kills.
 * Closing what it returns stops the consumer; in-flight messages finish or go back to the queue.
 */
@FunctionalInterface
public interface ConsumerFactory {
    /**
     * Starts one consumer on what {@code context} gives it: its connection factory and database (behind the run's
     * proxies), the collection, the queue and how many threads to use.
     *
     * @param context what this consumer may use
     * @return what stops it
     * @throws Exception if it cannot start; the run then stops every consumer it started and fails with it
     */
    AutoCloseable start(ChaosContext context) throws Exception;

    /**
     * An {@link OperationConsumer} with the canonical envelope and default options, applying to {@code schema}; its
     * container reconnects every half second after a cut (Spring's default is every five, which would make a
     * two-second cut cost five).
     */
    static ConsumerFactory standard(CollectionSchema schema) {
        return context -> OperationConsumer.builder(context.connectionFactory(), GuardedApplier.create(
                        context.database().getCollection(context.collection(), BsonDocument.class), schema))
                .options(ConsumerOptions.ofDefaults(context.queue()).withConcurrency(context.concurrency()))
                .container(() -> {
                    SimpleMessageListenerContainer container = new SimpleMessageListenerContainer();
                    container.setRecoveryInterval(500);
                    return container;
                })
                .start();
    }
}
