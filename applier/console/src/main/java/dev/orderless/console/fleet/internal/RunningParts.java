package dev.orderless.console.fleet.internal;

import dev.orderless.boot.OrderlessCompaction;
import dev.orderless.boot.OrderlessConsumer;
import dev.orderless.boot.OrderlessFeeders;
import dev.orderless.boot.OrderlessHistoryBaseline;
import dev.orderless.boot.OrderlessHistoryRetention;
import dev.orderless.boot.OrderlessView;
import dev.orderless.console.ConsoleSources;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;

/**
 * What runs in a Spring Boot application, from its orderless beans, as the console shows it and the fleet's reports
 * carry it: the consumer with its dead letters, the feeders of the {@link OrderlessView} beans, the passes and the
 * meters. One wiring for the console's auto-configuration and the fleet's own (an instance without a web server).
 * Not API: the auto-configurations' shared part.
 *
 * @param consumers the consumer, if the application runs one over AMQP 0-9-1
 * @param feeders   each view's feeder, read when asked
 * @param passes    compaction, history retention and baseline, where they run
 * @param meters    the meter registry, if any
 */
public record RunningParts(List<ConsoleSources.Consumer> consumers, Map<String, Supplier<Optional<ViewFeeder>>> feeders,
                           List<ConsoleSources.Pass> passes, Optional<MeterRegistry> meters) {
    /** Copies the parts. */
    public RunningParts {
        consumers = List.copyOf(consumers);
        feeders = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(feeders));
        passes = List.copyOf(passes);
    }

    /** The parts the beans there are make. */
    public static RunningParts of(ObjectProvider<OrderlessConsumer> consumer,
                                  ObjectProvider<ConnectionFactory> connectionFactory,
                                  ObjectProvider<OrderlessFeeders> feeders, ObjectProvider<OrderlessView> views,
                                  ObjectProvider<OrderlessCompaction> compaction,
                                  ObjectProvider<OrderlessHistoryRetention> retention,
                                  ObjectProvider<OrderlessHistoryBaseline> baseline,
                                  ObjectProvider<MeterRegistry> meters) {
        List<ConsoleSources.Consumer> consumers = new ArrayList<>();
        consumer.ifAvailable(c -> connectionFactory.ifAvailable(cf -> consumers.add(consumer(c, cf))));
        Map<String, Supplier<Optional<ViewFeeder>>> feeding = new LinkedHashMap<>();
        views.orderedStream().forEach(view -> feeding.put(view.name(),
                () -> Optional.ofNullable(feeders.getIfAvailable()).map(f -> f.feeders().get(view.name()))));
        List<ConsoleSources.Pass> passes = new ArrayList<>();
        compaction.ifAvailable(p -> passes.add(new ConsoleSources.Pass("compaction", p::isRunning, p::passes,
                p::failures, p::lastFailure)));
        retention.ifAvailable(p -> passes.add(new ConsoleSources.Pass("history retention", p::isRunning, p::passes,
                p::failures, p::lastFailure)));
        baseline.ifAvailable(p -> passes.add(new ConsoleSources.Pass("history baseline", p::isRunning, p::passes,
                p::failures, p::lastFailure)));
        return new RunningParts(consumers, feeding, passes, Optional.ofNullable(meters.getIfAvailable()));
    }

    /** The Boot consumer, with its dead letters on the publisher connection as its endpoint reads them. */
    private static ConsoleSources.Consumer consumer(OrderlessConsumer consumer, ConnectionFactory connectionFactory) {
        ConnectionFactory publishing = connectionFactory.getPublisherConnectionFactory();
        // consuming, not merely started: a consumer waiting for a broker that does not answer is not running
        return new ConsoleSources.Consumer(consumer.options().queue(), consumer::isConsuming, consumer::retrying,
                consumer::waitingFor, dev.orderless.amqp.DeadLetterQueue.of(publishing != null ? publishing
                        : connectionFactory, consumer.options().queue(), consumer.options().deadLetterQueue()));
    }

    /** The outbox relay's figures (a class of its own: the relay's classes are there only with the producer artifact). */
    public static final class OutboxFigures {
        private OutboxFigures() {
        }

        /** The figures of {@code relay}. */
        public static ConsoleSources.Outbox of(dev.orderless.outbox.boot.OrderlessOutboxRelay relay) {
            return new ConsoleSources.Outbox(
                    () -> relay.relay().map(r -> r.state().name()).orElse("NOT_RUNNING"),
                    () -> relay.relay().map(r -> r.backlog()).orElse(0L),
                    () -> relay.relay().flatMap(r -> r.oldest()),
                    () -> relay.relay().map(r -> r.parked()).orElse(0L),
                    () -> relay.relay().map(r -> r.published()).orElse(0L),
                    () -> relay.relay().flatMap(r -> r.problem()));
        }
    }
}
