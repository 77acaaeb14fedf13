package dev.orderless.consume;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.consume.internal.Applying;
import dev.orderless.consume.internal.ApplyingHandler;
import dev.orderless.consume.internal.BatchApplyingHandler;
import dev.orderless.consume.internal.ConsumeObservations;
import dev.orderless.consume.internal.ConsumerMetrics;
import dev.orderless.consume.internal.HandlerSettings;
import dev.orderless.consume.internal.Handling;
import dev.orderless.consume.internal.RetryPause;
import dev.orderless.history.History;
import dev.orderless.history.RecordingApplier;
import dev.orderless.message.Envelope;
import dev.orderless.message.OperationDecoder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.CountDownLatch;

/**
 * What every orderless consumer is built from, whatever its broker (RabbitMQ over AMQP 0-9-1 or 1.0, Kafka's share
 * groups): how bodies become operations, where the meters and observations go, and whether operations are recorded
 * in a history. Each broker's builder extends it with what is its own (the connection, the options) and a
 * {@code start()}; these settings, their defaults and their checks are here once.
 *
 * @param <B> the broker's builder, returned by every setter so that calls chain
 */
public abstract class ConsumerBuilder<B extends ConsumerBuilder<B>> {
    private final String consumer;
    private final GuardedApplier applier;
    /** Null until set: the default is the canonical {@link Envelope}, counting in this consumer's meters. */
    private OperationDecoder decoder;
    private boolean decoderSet;
    private MeterRegistry meters = new SimpleMeterRegistry();
    private ObservationRegistry observations = ObservationRegistry.NOOP;
    private History history;

    /**
     * A builder for one broker's consumer.
     *
     * @param consumer what the broker's consumer is called in messages ({@code "consumer"}, {@code "Kafka share
     *                 consumer"})
     * @param applier  applies each operation to its collection
     * @throws InvalidConfigurationException if the applier is missing
     */
    protected ConsumerBuilder(String consumer, GuardedApplier applier) {
        if (applier == null) {
            throw new InvalidConfigurationException(consumer + ": the applier is required");
        }
        this.consumer = consumer;
        this.applier = applier;
    }

    /** This builder, as its own type. */
    protected abstract B self();

    /**
     * How bodies become operations; the canonical {@link Envelope} by default (its meters in this consumer's registry).
     *
     * @param decoder e.g. a {@link dev.orderless.message.TypedDecoder} for the application's own message classes
     * @return this builder
     */
    public B decoder(OperationDecoder decoder) {
        this.decoder = decoder;
        this.decoderSet = true;
        return self();
    }

    /**
     * Where it registers its meters ({@code orderless.consume.*} tagged with the queue or topic, the envelope's);
     * by default a registry of its own that nothing reads.
     *
     * @param meters the application's registry
     * @return this builder
     */
    public B meters(MeterRegistry meters) {
        this.meters = meters;
        return self();
    }

    /**
     * Records Micrometer observations, none by default: {@code orderless.consume}, one per message from its
     * delivery to its settling, continuing the trace the publisher put in its headers (low-cardinality keys
     * {@code orderless.queue} and {@code orderless.outcome}); {@code orderless.apply}, one per MongoDB apply
     * inside it (in batch mode, each message's spans its batch's bulk write).
     *
     * @param observations the application's registry
     * @return this builder
     */
    public B observations(ObservationRegistry observations) {
        this.observations = observations;
        return self();
    }

    /**
     * Records every operation in {@code history} before applying it (see {@link RecordingApplier}); bad input is
     * refused first and not recorded. Off by default.
     *
     * @param history the entity's version history
     * @return this builder
     */
    public B history(History history) {
        this.history = history;
        return self();
    }

    /** The meters set, or the builder's own registry. */
    protected final MeterRegistry meterRegistry() {
        return meters;
    }

    /** The history set, if one was. */
    protected final java.util.Optional<History> recordedIn() {
        return java.util.Optional.ofNullable(history);
    }

    /**
     * Checks what was set here: a start calls it first.
     *
     * @throws InvalidConfigurationException naming the setting that is null
     */
    protected final void checkParts() {
        if ((decoderSet && decoder == null) || meters == null || observations == null) {
            throw new InvalidConfigurationException(consumer + ": decoder, meters and observations must not be null");
        }
    }

    /**
     * The apply logic the consumer's threads drive, made once: the decoder, the history's recording, the metrics, the
     * retry pauses (ended by {@code stop}) and the observations.
     *
     * @param settings what the broker's options say of the apply
     * @param stop     counted down when the consumer stops: a retry pause ends, its message is handed back
     * @return the handlers and the meters they count in
     */
    protected final Handling handling(HandlerSettings settings, CountDownLatch stop) {
        checkParts();
        ConsumerMetrics metrics = new ConsumerMetrics(meters, settings.source());
        Applying applying = history == null ? Applying.by(applier) : Applying.recorded(history.recording(applier));
        ApplyingHandler single = new ApplyingHandler(applier, applying,
                decoderSet ? decoder : new Envelope().withMeters(meters), settings, metrics,
                new RetryPause(settings.backoff(), stop), new ConsumeObservations(observations, settings.source()));
        return new Handling(single, new BatchApplyingHandler(single), metrics);
    }
}
