package dev.orderless.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.boot.internal.ConsumerStarter;
import dev.orderless.boot.internal.ConsumerWatch;
import dev.orderless.boot.internal.RunningConsumer;
import dev.orderless.broker.QueueTopology;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The consumer as a Spring bean: the {@link OperationConsumer} on the application's own {@link ConnectionFactory},
 * or with {@code orderless.consumer.protocol=amqp-1.0} the AMQP 1.0 one ({@code orderless-rabbit-amqp10}, RabbitMQ
 * 4). Starting declares the queue and its dead-letter queue ({@link QueueTopology}: quorum on RabbitMQ,
 * classic elsewhere, or as {@code orderless.consumer.queue-type} says; always quorum over AMQP 1.0) and starts
 * consuming. If the broker
 * does not answer, the application starts anyway: the consumer says so at WARN, its health is DOWN with
 * the reason, and it tries again every {@value #RETRY_SECONDS} s. A queue that exists with other
 * arguments fails the start, naming it.
 *
 * <p>What health reads never waits for the broker or for a start in progress (which may wait a whole
 * connection timeout on a host that drops packets): the consumer's state is read without its lock, and
 * the dead-letter depth is the last one read, refreshed in the background.
 */
public final class OrderlessConsumer implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(OrderlessConsumer.class);
    static final long RETRY_SECONDS = ConsumerWatch.RETRY_SECONDS;

    private final ConnectionFactory connectionFactory;
    private final ConsumerOptions options;
    private final OrderlessProperties.QueueType queueType;
    private final OrderlessProperties.Protocol protocol;
    private final ConsumerStarter starter;
    private final Optional<Duration> deadLetterTtl;
    private final QueueDepth deadLetterDepth;
    private final ConsumerWatch<RunningConsumer> watch;

    /**
     * @param connectionFactory where the queues are declared (and, over AMQP 0-9-1, consumed)
     * @param starter           starts the consumer once its queues are declared
     */
    OrderlessConsumer(ConnectionFactory connectionFactory, ConsumerOptions options,
                      OrderlessProperties.QueueType queueType, OrderlessProperties.Protocol protocol,
                      Optional<Duration> deadLetterTtl, ConsumerStarter starter) {
        this(connectionFactory, options, queueType, protocol, deadLetterTtl, starter, Optional::empty);
    }

    /**
     * @param connectionFactory where the queues are declared (and, over AMQP 0-9-1, consumed)
     * @param starter           starts the consumer once its queues are declared
     * @param before            what must happen before it consumes, while it has not (the history's start to be
     *                          decided): asked at each try, without waiting; the consumer tries again every
     *                          {@value #RETRY_SECONDS} s meanwhile
     */
    OrderlessConsumer(ConnectionFactory connectionFactory, ConsumerOptions options,
                      OrderlessProperties.QueueType queueType, OrderlessProperties.Protocol protocol,
                      Optional<Duration> deadLetterTtl, ConsumerStarter starter, Supplier<Optional<String>> before) {
        if (protocol == OrderlessProperties.Protocol.AMQP_1_0 && queueType == OrderlessProperties.QueueType.CLASSIC) {
            throw new InvalidConfigurationException("orderless.consumer.protocol=amqp-1.0 needs a quorum queue (only"
                    + " a quorum queue dead-letters with the consumer's reason): set orderless.consumer.queue-type to"
                    + " auto or quorum");
        }
        this.deadLetterTtl = deadLetterTtl;
        this.starter = starter;
        this.connectionFactory = connectionFactory;
        this.options = options;
        this.queueType = queueType;
        this.protocol = protocol;
        this.deadLetterDepth = new QueueDepth(connectionFactory, options.deadLetterQueue());
        this.watch = new ConsumerWatch<>(log, "consumer on '" + options.queue() + "'", before, this::declareAndStart,
                RunningConsumer::isRunning, e -> e instanceof TransientException || e instanceof AmqpException
                        // the broker did not answer (QueueTopology names where and what to check): the watch tries again
                        ? Optional.of("the broker does not answer: " + e.getMessage()) : Optional.empty());
    }

    /** The consumer over AMQP 0-9-1: {@code wiring} adds what the application has (observations, history, container). */
    static OrderlessConsumer overAmqp091(ConnectionFactory connectionFactory, GuardedApplier applier,
                                         ConsumerOptions options, OrderlessProperties.QueueType queueType,
                                         MeterRegistry meters, Optional<Duration> deadLetterTtl,
                                         Supplier<Optional<String>> before,
                                         UnaryOperator<OperationConsumer.Builder> wiring) {
        return new OrderlessConsumer(connectionFactory, options, queueType, OrderlessProperties.Protocol.AMQP_0_9_1,
                deadLetterTtl, () -> {
                    OperationConsumer consumer = wiring.apply(OperationConsumer.builder(connectionFactory, applier)
                            .options(options).meters(meters)).start();
                    return RunningConsumer.of(consumer::isRunning, consumer::retrying, consumer::waitingFor,
                            consumer::close);
                }, before);
    }

    public ConsumerOptions options() {
        return options;
    }

    /**
     * Starts consuming, or, if the broker does not answer, starts anyway and tries again every
     * {@value #RETRY_SECONDS} s (a bad configuration throws). The same watch restarts a consumer that stopped
     * consuming on its own (a consumer thread or link that ended for good), so that it never stays down in silence
     * until the process restarts.
     */
    @Override
    public void start() {
        watch.start("orderless-consumer-watch-" + options.queue());
    }

    /** How often the watch looks, before {@link #start()}: {@value #RETRY_SECONDS} s unless a test asks otherwise. */
    void watchEvery(Duration interval) {
        watch.every(interval);
    }

    /** Declares the queues and starts the consumer (a refusal throws, as does a broker that does not answer). */
    private RunningConsumer declareAndStart() {
        boolean quorum = switch (queueType) {
            case QUORUM -> true;
            case CLASSIC -> false;
            case AUTO -> protocol == OrderlessProperties.Protocol.AMQP_1_0 || QueueTopology.isRabbitMq(connectionFactory);
        };
        if (deadLetterTtl.isPresent() && !quorum) {
            log.warn("orderless.consumer.dead-letter-ttl is not declared on '{}': letters park by age only on"
                    + " RabbitMQ with orderless.consumer.queue-type auto or quorum; replay still refuses letters"
                    + " older than the grace", options.deadLetterQueue());
        }
        QueueTopology.declare(connectionFactory, options.queue(), options.deadLetterQueue(),
                quorum ? QueueTopology.QueueType.QUORUM : QueueTopology.QueueType.CLASSIC, deadLetterTtl);
        return starter.start();
    }

    @Override
    public void stop() {
        try {
            watch.stop();
        } finally {
            starter.close();
        }
    }

    /** True from start to stop, also while waiting for the broker, so that stopping the context stops it. */
    @Override
    public boolean isRunning() {
        return watch.isStarted();
    }

    /** True while it consumes. Never waits for a start in progress. */
    public boolean isConsuming() {
        return watch.current().map(RunningConsumer::isRunning).orElse(false);
    }

    /** The protocol it consumes with. */
    public OrderlessProperties.Protocol protocol() {
        return protocol;
    }

    /**
     * Messages being retried now after a transient failure, at most one per consumer thread (0 while not consuming):
     * {@code OperationConsumer.retrying()}, or the AMQP 1.0 consumer's. The deliveries prefetched behind them are
     * unacked too and not counted.
     */
    public int retrying() {
        return watch.current().map(RunningConsumer::retrying).orElse(0);
    }

    /**
     * Why it is not consuming though started (the broker does not answer, a refusal), or, while it consumes, why
     * it applies nothing ({@code MongoDB: ...}: MongoDB unavailable; its messages are held), if so.
     */
    public Optional<String> waitingFor() {
        return watch.waiting().or(() -> watch.current().flatMap(RunningConsumer::waitingFor));
    }

    /**
     * Messages waiting in the dead-letter queue, as last read (at most {@value QueueDepth#FRESH_SECONDS} s
     * old, read in the background); empty until the broker has answered.
     */
    public OptionalLong deadLetterDepth() {
        return deadLetterDepth.get();
    }
}
