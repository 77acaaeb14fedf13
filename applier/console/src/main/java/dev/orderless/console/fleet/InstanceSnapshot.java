package dev.orderless.console.fleet;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.console.ConsoleSources;
import dev.orderless.lease.LeaseProvider;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * What runs in this instance now, as the console's overview shows it and as the instance reports itself to the fleet:
 * its consumers (queue, {@code RUNNING}/{@code STOPPED}, retrying, waitingFor, handled, deadLettered), view feeders
 * (view, state, lagSeconds, failure, ...), outbox and passes. This is the one definition of those figures: the
 * overview and the fleet's reports both call it, so a page showing this instance and a page showing it through the
 * fleet cannot disagree about what "stopped" or "stuck" means.
 *
 * <p>Every figure is read when asked, from the running parts; a feeder figure that cannot be read is null, not a
 * failure of the whole snapshot.
 */
public final class InstanceSnapshot {
    /** The consumer counters, as the library's consumers name them. */
    static final String HANDLED = "orderless.consume.outcomes";
    static final String DEAD_LETTERED = "orderless.consume.dead_lettered";

    private final List<ConsoleSources.Consumer> consumers;
    private final Map<String, Supplier<Optional<ViewFeeder>>> feeders;
    private final Optional<ConsoleSources.Outbox> outbox;
    private final List<ConsoleSources.Pass> passes;
    private final Optional<MeterRegistry> meters;
    private final Optional<LeaseProvider> leases;

    /**
     * @param consumers the consumers to show
     * @param feeders   the view feeders by view name (an empty {@code Optional}: not running here)
     * @param outbox    the outbox relay's figures, if there is one
     * @param passes    the scheduled passes
     * @param meters    where the consumers count what they handled and dead-lettered, if anywhere
     * @param leases    the feeders' leases, to name who holds each view's segments (the overview's detail)
     * @throws InvalidConfigurationException if a part is null
     */
    public InstanceSnapshot(List<ConsoleSources.Consumer> consumers, Map<String, Supplier<Optional<ViewFeeder>>> feeders,
                            Optional<ConsoleSources.Outbox> outbox, List<ConsoleSources.Pass> passes,
                            Optional<MeterRegistry> meters, Optional<LeaseProvider> leases) {
        if (consumers == null || feeders == null || outbox == null || passes == null || meters == null
                || leases == null) {
            throw InvalidConfigurationException.refused("instance snapshot", "every part",
                    "must not be null (use Optional.empty())");
        }
        this.consumers = List.copyOf(consumers);
        this.feeders = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(feeders));
        this.outbox = outbox;
        this.passes = List.copyOf(passes);
        this.meters = meters;
        this.leases = leases;
    }

    /**
     * The snapshot of what {@code sources} shows.
     *
     * @param sources what the console shows
     * @param leases  the feeders' lease provider, to name who holds each view's segments
     * @return its snapshot
     */
    public static InstanceSnapshot of(ConsoleSources sources, Optional<LeaseProvider> leases) {
        return new InstanceSnapshot(sources.consumers(), sources.feeders(), sources.outbox(), sources.passes(),
                sources.meters(), leases);
    }

    /** @return the consumers it reads */
    List<ConsoleSources.Consumer> consumerSources() {
        return consumers;
    }

    /**
     * @return each consumer: {@code queue}, {@code state} ({@code RUNNING} while its listener threads consume, else
     *         {@code STOPPED}), {@code retrying}, {@code waitingFor} (null when nothing), and with meters
     *         {@code handled} and {@code deadLettered} (counters since the process started)
     */
    public List<Map<String, Object>> consumers() {
        List<Map<String, Object>> list = new ArrayList<>();
        for (ConsoleSources.Consumer consumer : consumers) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("queue", consumer.queue());
            c.put("state", consumer.running().getAsBoolean() ? "RUNNING" : "STOPPED");
            c.put("retrying", consumer.retrying().getAsInt());
            c.put("waitingFor", consumer.waitingFor().get().orElse(null));
            counted(HANDLED, consumer.queue()).ifPresent(n -> c.put("handled", n));
            counted(DEAD_LETTERED, consumer.queue()).ifPresent(n -> c.put("deadLettered", n));
            list.add(c);
        }
        return list;
    }

    /**
     * @return each view's feeder, with every detail: {@code view}, {@code state} ({@code NOT_RUNNING} where this
     *         process runs none, else the feeder's), {@code lagSeconds}, {@code segments} (each segment's fence),
     *         {@code segmentCount}, {@code failure} (when it failed), {@code holders} (who holds its leases, where the
     *         provider can tell) and {@code deadLettered}
     */
    public List<Map<String, Object>> feeders() {
        return feeders(true);
    }

    /**
     * As {@link #feeders()} without the figures keyed by segment or lease (the {@code segments} and {@code holders}
     * maps): what an instance reports of its feeders to the fleet, without asking MongoDB for the leases each time.
     */
    List<Map<String, Object>> reportedFeeders() {
        return feeders(false);
    }

    private List<Map<String, Object>> feeders(boolean detail) {
        List<Map<String, Object>> list = new ArrayList<>();
        feeders.forEach((view, running) -> list.add(feeder(view, running.get(), detail)));
        return list;
    }

    private Map<String, Object> feeder(String view, Optional<ViewFeeder> running, boolean detail) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("view", view);
        if (running.isEmpty()) {
            f.put("state", "NOT_RUNNING");
            return f;
        }
        ViewFeeder feeder = running.get();
        f.put("state", feeder.state().name());
        f.put("lagSeconds", feeder.lag().map(InstanceSnapshot::seconds).orElse(null));
        if (detail) {
            Map<String, Object> segments = new LinkedHashMap<>();
            feeder.fences().forEach((segment, fence) -> segments.put(segment.toString(), fence));
            f.put("segments", segments);
        }
        f.put("segmentCount", feeder.options().segments());
        feeder.failure().map(OrderlessException::getMessage).ifPresent(why -> f.put("failure", why));
        if (detail) {
            String resource = feeder.options().resource();
            leases.flatMap(provider -> holders(provider, resource)).ifPresent(holders -> f.put("holders", holders));
        }
        try {
            f.put("deadLettered", feeder.deadLettered());
        } catch (RuntimeException e) {   // the snapshot still answers; the figure says it could not be read
            f.put("deadLettered", null);
        }
        return f;
    }

    /** Who holds the feeder's leases (each segment's), if the provider can list them. */
    private static Optional<Map<String, String>> holders(LeaseProvider provider, String resource) {
        try {
            return provider.holders(resource);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * @return the outbox relay's {@code state}, {@code backlog}, {@code oldestSeconds}, {@code parked},
     *         {@code published} and {@code problem}, if the instance has a relay
     */
    public Optional<Map<String, Object>> outbox() {
        return outbox.map(o -> {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("state", o.state().get());
            figures.put("backlog", o.backlog().getAsLong());
            figures.put("oldestSeconds", o.oldest().get().map(InstanceSnapshot::seconds).orElse(null));
            figures.put("parked", o.parked().getAsLong());
            figures.put("published", o.published().getAsLong());
            figures.put("problem", o.problem().get().orElse(null));
            return figures;
        });
    }

    /**
     * @return each pass: {@code name}, {@code state} ({@code RUNNING} while its schedule runs), {@code passes},
     *         {@code failures} and {@code lastFailure} (why the last pass failed, null once one succeeds again)
     */
    public List<Map<String, Object>> passes() {
        List<Map<String, Object>> list = new ArrayList<>();
        for (ConsoleSources.Pass pass : passes) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("name", pass.name());
            p.put("state", pass.running().getAsBoolean() ? "RUNNING" : "STOPPED");
            p.put("passes", pass.passes().getAsLong());
            p.put("failures", pass.failures().getAsLong());
            p.put("lastFailure", pass.lastFailure().get().orElse(null));
            list.add(p);
        }
        return list;
    }

    /** A count of the counters named {@code name} with tag {@code queue}, or empty without meters. */
    private OptionalLong counted(String name, String queue) {
        if (meters.isEmpty()) {
            return OptionalLong.empty();
        }
        double sum = meters.get().find(name).tag("queue", queue).counters().stream().mapToDouble(Counter::count).sum();
        return OptionalLong.of((long) sum);
    }

    static Double seconds(Duration duration) {
        return duration.toMillis() / 1000.0;
    }
}
