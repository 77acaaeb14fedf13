package dev.orderless.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.amqp.QueueTopology;
import dev.orderless.apply.GuardedApplier;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The {@link OperationConsumer} as a Spring bean, on the application's own {@link ConnectionFactory}.
 * Starting declares the queue and its dead-letter queue ({@link QueueTopology}: quorum on RabbitMQ,
 * classic elsewhere, or as {@code orderless.consumer.queue-type} says) and starts consuming. If the broker
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
    static final long RETRY_SECONDS = 5;

    private final ConnectionFactory connectionFactory;
    private final GuardedApplier applier;
    private final ConsumerOptions options;
    private final OrderlessProperties.QueueType queueType;
    private final MeterRegistry meters;
    private final UnaryOperator<OperationConsumer.Builder> wiring;
    private final Optional<Duration> deadLetterTtl;
    private volatile Optional<OperationConsumer> consuming = Optional.empty();
    private final QueueDepth deadLetterDepth;
    private Optional<ScheduledExecutorService> retrying = Optional.empty();
    private volatile Optional<String> waiting = Optional.empty();
    private boolean started;

    OrderlessConsumer(ConnectionFactory connectionFactory, GuardedApplier applier, ConsumerOptions options,
                      OrderlessProperties.QueueType queueType, MeterRegistry meters,
                      Optional<Duration> deadLetterTtl, UnaryOperator<OperationConsumer.Builder> wiring) {
        this.deadLetterTtl = deadLetterTtl;
        this.wiring = wiring;
        this.connectionFactory = connectionFactory;
        this.applier = applier;
        this.options = options;
        this.queueType = queueType;
        this.meters = meters;
        this.deadLetterDepth = new QueueDepth(connectionFactory, options.deadLetterQueue());
    }

    public ConsumerOptions options() {
        return options;
    }

    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        if (!tryStart()) {
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread thread = new Thread(r, "orderless-consumer-start-" + options.queue());
                thread.setDaemon(true);
                return thread;
            });
            executor.scheduleWithFixedDelay(this::retry, RETRY_SECONDS, RETRY_SECONDS, TimeUnit.SECONDS);
            retrying = Optional.of(executor);
        }
    }

    private synchronized void retry() {
        try {
            if (started && consuming.isEmpty() && tryStart()) {
                retrying.ifPresent(ScheduledExecutorService::shutdown);
                retrying = Optional.empty();
            }
        } catch (RuntimeException e) {
            // an exception would end the schedule in silence: say it (once per reason), and keep trying
            String why = "it failed: " + e;
            if (!waiting.equals(Optional.of(why))) {
                log.error("consumer on '{}' cannot start, {}; trying again every {} s", options.queue(), why,
                        RETRY_SECONDS);
            }
            waiting = Optional.of(why);
        }
    }

    /** Declares and starts; false if the broker did not answer (a bad configuration throws). */
    private boolean tryStart() {
        try {
            boolean quorum = switch (queueType) {
                case QUORUM -> true;
                case CLASSIC -> false;
                case AUTO -> QueueTopology.isRabbitMq(connectionFactory);
            };
            if (deadLetterTtl.isPresent() && !quorum) {
                log.warn("orderless.consumer.dead-letter-ttl is not declared on '{}': letters park by age only on"
                        + " RabbitMQ with orderless.consumer.queue-type auto or quorum; replay still refuses letters"
                        + " older than the grace", options.deadLetterQueue());
            }
            QueueTopology.declare(connectionFactory, options.queue(), options.deadLetterQueue(), quorum, deadLetterTtl);
            consuming = Optional.of(wiring.apply(OperationConsumer.builder(connectionFactory, applier).options(options)
                    .meters(meters)).start());
            if (waiting.isPresent()) {
                log.info("consumer on '{}' started: the broker answers again", options.queue());
            }
            waiting = Optional.empty();
            return true;
        } catch (InvalidConfigurationException e) {
            if (waiting.isPresent()) {   // on a retry thread: nobody to throw to
                if (!waiting.equals(Optional.of(e.getMessage()))) {
                    log.error("consumer on '{}' cannot start: {}", options.queue(), e.getMessage());
                }
                waiting = Optional.of(e.getMessage());
                return false;
            }
            throw e;
        } catch (AmqpException e) {
            String why = "the broker does not answer: " + e.getMessage();
            if (!waiting.equals(Optional.of(why))) {   // once per reason, not every 5 s while it lasts
                log.warn("consumer on '{}' not started, {}; trying again every {} s (its health says so meanwhile)",
                        options.queue(), why, RETRY_SECONDS);
            }
            waiting = Optional.of(why);
            return false;
        }
    }

    @Override
    public synchronized void stop() {
        retrying.ifPresent(ScheduledExecutorService::shutdownNow);
        retrying = Optional.empty();
        consuming.ifPresent(OperationConsumer::close);
        consuming = Optional.empty();
        started = false;
    }

    /** True from start to stop, also while waiting for the broker, so that stopping the context stops it. */
    @Override
    public synchronized boolean isRunning() {
        return started;
    }

    /** True while its listener container consumes. Never waits for a start in progress. */
    public boolean isConsuming() {
        return consuming.map(OperationConsumer::isRunning).orElse(false);
    }

    /** Messages held now, retried after a failure (0 while not consuming). */
    public int holding() {
        return consuming.map(OperationConsumer::holding).orElse(0);
    }

    /** Why it is not consuming though started, if so. */
    public Optional<String> waitingFor() {
        return waiting;
    }

    /**
     * Messages waiting in the dead-letter queue, as last read (at most {@value QueueDepth#FRESH_SECONDS} s
     * old, read in the background); empty until the broker has answered.
     */
    public OptionalLong deadLetterDepth() {
        return deadLetterDepth.get();
    }
}
