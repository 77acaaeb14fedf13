package dev.orderless.console;

import com.mongodb.client.MongoCollection;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.history.History;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * What the console shows and acts on, read live on every request: nothing here is a copy that could go stale. Its
 * consumers, feeders, outbox and passes are also what this instance reports to the fleet
 * ({@link dev.orderless.console.fleet.InstanceSnapshot}: one computation for both), and its consumers' queues are the
 * backlog's rows (counted on each consumer's dead-letter connection factory).
 * The Spring Boot auto-configuration builds it from the application's orderless beans; an application that wires
 * orderless by hand (the demo's {@code run}) builds it itself and declares it as a bean.
 *
 * <pre>{@code
 * ConsoleSources.builder(students, schema)
 *         .consumer(ConsoleSources.Consumer.of(consumer, connectionFactory))
 *         .feeder("class_rosters", () -> Optional.of(feeder))
 *         .history(history)
 *         .meters(meters)
 *         .build();
 * }</pre>
 *
 * @param entities  the collection the consumers write, read by {@code _id} for an entity's live document
 * @param schema    the schema its documents follow, to read a version's state
 * @param history   the history of {@code entities}, if the application records one: an entity's versions
 * @param consumers the consumers, each with its queue's dead letters
 * @param feeders   the view feeders by view name; an empty {@code Optional} is a view whose feeder is not running
 * @param outbox    the outbox relay's figures, if the application has one
 * @param passes    compaction, retention and baseline passes by name
 * @param meters    where the consumers' counters are, for their rates
 * @param grace     how old a dead letter may be and still be replayed (the tombstone grace, when compaction runs)
 * @param clock     the clock replays judge a letter's age by
 */
public record ConsoleSources(MongoCollection<BsonDocument> entities, CollectionSchema schema, Optional<History> history,
                             List<Consumer> consumers, Map<String, Supplier<Optional<ViewFeeder>>> feeders,
                             Optional<Outbox> outbox, List<Pass> passes, Optional<MeterRegistry> meters,
                             Optional<Duration> grace, Clock clock) {
    private static final String SOURCES = "console sources";

    /** Validates every part: none may be null, and consumer queues and pass names are each named once. */
    public ConsoleSources {
        if (entities == null || schema == null) {
            throw InvalidConfigurationException.refused(SOURCES, entities == null ? "entities" : "schema",
                    "must not be null");
        }
        if (history == null || consumers == null || feeders == null || outbox == null || passes == null
                || meters == null || grace == null || clock == null) {
            throw InvalidConfigurationException.refused(SOURCES, "every part", "must not be null (use Optional.empty())");
        }
        consumers = List.copyOf(consumers);
        feeders = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(feeders));
        passes = List.copyOf(passes);
        if (consumers.stream().map(Consumer::queue).distinct().count() != consumers.size()) {
            throw InvalidConfigurationException.refused(SOURCES, "consumers", "name each queue once");
        }
    }

    /**
     * A builder of what the console shows about {@code entities}.
     *
     * @param entities the collection the consumers write
     * @param schema   the schema of its documents
     * @return a builder with no consumer, feeder, history, outbox, pass or meters yet
     */
    public static Builder builder(MongoCollection<BsonDocument> entities, CollectionSchema schema) {
        return new Builder(entities, schema);
    }

    /** The consumer of {@code queue}, if the console has one. */
    Optional<Consumer> consumer(String queue) {
        return consumers.stream().filter(c -> c.queue().equals(queue)).findFirst();
    }

    /**
     * One consumer as the console sees it: whether its listener threads run, what it retries, and its dead letters.
     *
     * @param queue       the work queue it consumes
     * @param running     true while its listener threads run (false once one of them died: shown as stopped)
     * @param retrying    messages it retries now after a transient MongoDB failure (at most one per thread; not
     *                    the prefetched deliveries behind them)
     * @param waitingFor  what it waits for while it holds messages (MongoDB, a blocked broker), if anything
     * @param deadLetters its dead-letter queue, listed, replayed, parked and purged by the console
     */
    public record Consumer(String queue, BooleanSupplier running, IntSupplier retrying,
                           Supplier<Optional<String>> waitingFor, DeadLetterQueue deadLetters) {
        /** Refuses a null part, naming it. */
        public Consumer {
            if (queue == null || running == null || retrying == null || waitingFor == null || deadLetters == null) {
                throw InvalidConfigurationException.refused(SOURCES, "consumer", "every part must be given");
            }
        }

        /**
         * An {@link OperationConsumer} and its dead-letter queue, on {@code connectionFactory}.
         *
         * @param consumer          the running consumer
         * @param connectionFactory the factory its dead letters are read and moved on (a publisher factory if it
         *                          has one, so a blocked broker cannot stall the consumer's acks)
         * @return the consumer as the console sees it
         */
        public static Consumer of(OperationConsumer consumer, ConnectionFactory connectionFactory) {
            return new Consumer(consumer.options().queue(), consumer::isRunning, consumer::retrying,
                    consumer::waitingFor, deadLettersOf(consumer.options(), connectionFactory));
        }

        /**
         * The dead letters of the consumer with {@code options}, on the publisher connection where the factory has
         * one, as the consumer's dead-letter publisher and the Actuator endpoint use: a blocked broker cannot stall
         * the consumer's acks through them.
         */
        static DeadLetterQueue deadLettersOf(dev.orderless.amqp.ConsumerOptions options,
                                             ConnectionFactory connectionFactory) {
            ConnectionFactory publishing = connectionFactory.getPublisherConnectionFactory();
            return DeadLetterQueue.of(publishing != null ? publishing : connectionFactory, options.queue(),
                    options.deadLetterQueue());
        }
    }

    /**
     * The outbox relay's figures.
     *
     * @param state     the relay's state, as it names it ({@code RUNNING}, {@code STOPPED}, ...)
     * @param backlog   entries not yet published
     * @param oldest    the age of the oldest of them, if any
     * @param parked    entries the relay could not publish and set aside
     * @param published entries published since it started
     * @param problem   what stops it now, if anything
     */
    public record Outbox(Supplier<String> state, LongSupplier backlog, Supplier<Optional<Duration>> oldest,
                         LongSupplier parked, LongSupplier published, Supplier<Optional<String>> problem) {
        /** Refuses a null part. */
        public Outbox {
            if (state == null || backlog == null || oldest == null || parked == null || published == null
                    || problem == null) {
                throw InvalidConfigurationException.refused(SOURCES, "outbox", "every part must be given");
            }
        }
    }

    /**
     * A scheduled pass (compaction, history retention, history baseline).
     *
     * @param name        what it is, as the overview names it
     * @param running     true while its schedule runs
     * @param passes      passes completed
     * @param failures    passes that failed
     * @param lastFailure why the last failed pass failed, if one did
     */
    public record Pass(String name, BooleanSupplier running, LongSupplier passes, LongSupplier failures,
                       Supplier<Optional<String>> lastFailure) {
        /** Refuses a null part. */
        public Pass {
            if (name == null || running == null || passes == null || failures == null || lastFailure == null) {
                throw InvalidConfigurationException.refused(SOURCES, "pass", "every part must be given");
            }
        }
    }

    /** Collects the parts; {@link #build()} validates them once. */
    public static final class Builder {
        private final MongoCollection<BsonDocument> entities;
        private final CollectionSchema schema;
        private Optional<History> history = Optional.empty();
        private final List<Consumer> consumers = new ArrayList<>();
        private final Map<String, Supplier<Optional<ViewFeeder>>> feeders = new LinkedHashMap<>();
        private Optional<Outbox> outbox = Optional.empty();
        private final List<Pass> passes = new ArrayList<>();
        private Optional<MeterRegistry> meters = Optional.empty();
        private Optional<Duration> grace = Optional.empty();
        private Clock clock = Clock.systemUTC();

        private Builder(MongoCollection<BsonDocument> entities, CollectionSchema schema) {
            this.entities = entities;
            this.schema = schema;
        }

        /**
         * @param consumer a consumer to show, with its dead letters
         * @return this builder
         */
        public Builder consumer(Consumer consumer) {
            consumers.add(consumer);
            return this;
        }

        /**
         * @param view   the view's name
         * @param feeder its feeder where this process runs one, read on every request
         * @return this builder
         */
        public Builder feeder(String view, Supplier<Optional<ViewFeeder>> feeder) {
            feeders.put(view, feeder);
            return this;
        }

        /**
         * @param history the history of the entities, for their versions
         * @return this builder
         */
        public Builder history(History history) {
            this.history = Optional.of(history);
            return this;
        }

        /**
         * @param outbox the outbox relay's figures
         * @return this builder
         */
        public Builder outbox(Outbox outbox) {
            this.outbox = Optional.of(outbox);
            return this;
        }

        /**
         * @param pass a scheduled pass to show
         * @return this builder
         */
        public Builder pass(Pass pass) {
            passes.add(pass);
            return this;
        }

        /**
         * @param meters the registry the consumers count in
         * @return this builder
         */
        public Builder meters(MeterRegistry meters) {
            this.meters = Optional.of(meters);
            return this;
        }

        /**
         * @param grace the tombstone grace: older dead letters are refused by a replay
         * @return this builder
         */
        public Builder grace(Duration grace) {
            this.grace = Optional.of(grace);
            return this;
        }

        /**
         * @param clock the clock replays judge a letter's age by
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * @return the sources, validated
         * @throws InvalidConfigurationException naming the part that is missing or named twice
         */
        public ConsoleSources build() {
            return new ConsoleSources(entities, schema, history, consumers, feeders, outbox, passes, meters, grace,
                    clock);
        }
    }
}
