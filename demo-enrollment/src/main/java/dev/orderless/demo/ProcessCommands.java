package dev.orderless.demo;

import com.mongodb.MongoException;
import dev.orderless.apply.Operation;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.view.Segment;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import dev.orderless.TransientException;
import dev.orderless.boot.OrderlessConsumer;
import dev.orderless.broker.QueueTopology;
import java.util.Optional;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The separate-process commands of a real deployment: {@code publish} (only the web application),
 * {@code consume} (only the consumers; run several, kill one, lose nothing) and {@code view} (only the
 * roster feeder; run two, watch the lease hand over). {@code consume} and {@code view} stop gracefully
 * on SIGTERM or Ctrl-C. Both are Spring Boot applications wired by orderless's auto-configuration
 * ({@link DemoBoot}).
 */
final class ProcessCommands {
    /** How long {@code consume --exit-when-idle} waits for consumers that do not consume (a broker away). */
    private static final Duration START_WAIT = Duration.ofSeconds(120);

    private ProcessCommands() {
    }

    static int consume(Wiring w, PrintStream out, boolean relay) throws Exception {
        DemoOptions o = w.options;
        out.println("consume: " + o.consumers() + " consumers" + (o.protocol() == Protocol.AMQP_1_0 ? " over AMQP 1.0" : "")
                + (relay ? " and an outbox relay" : "")
                + (o.exitWhenIdleSeconds() > 0
                ? ", exiting once idle " + o.exitWhenIdleSeconds() + " s, holding nothing, with an empty queue" : ", until stopped"));
        out.println(w.describe());
        out.println("  starting the consumers (a Spring Boot application inside)");
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Counts counts = new Counts(meters);
        String process = "consume " + ManagementFactory.getRuntimeMXBean().getName() + " " + System.currentTimeMillis();
        try (StopSignal stop = new StopSignal()) {
            try (ConfigurableApplicationContext context = DemoBoot.consume(w, meters);
                 AutoCloseable relaying = relay ? w.startRelay(meters, 500, Duration.ofSeconds(10)) : () -> { };
                 Progress progress = new Progress(out, () -> String.format("  applied %,.0f, stale %,.0f,"
                         + " dead-lettered %,.0f, retried %,.0f", counts.applied(), counts.stale(),
                         counts.deadLettered(), counts.retried()) + DemoBoot.consumer(context).waitingFor()
                         .map(why -> "; waiting for " + why).orElse(""))) {
                OrderlessConsumer consumer = DemoBoot.consumer(context);
                double lastHandled = -1;
                long idleSince = System.nanoTime();
                long consumingSince = System.nanoTime();
                long tallied = System.nanoTime();
                Optional<String> said = Optional.empty();
                while (!stop.await(200)) {
                    double handled = counts.handled();
                    if (System.nanoTime() - tallied > 1_000_000_000L) {
                        tally(w, process, counts, out);
                        tallied = System.nanoTime();
                    }
                    if (consumer.isConsuming()) {
                        consumingSince = System.nanoTime();
                    } else if (o.exitWhenIdleSeconds() > 0 && System.nanoTime() - consumingSince > START_WAIT.toNanos()) {
                        // bounded: a run meant to end does not wait for ever on a broker that never comes back
                        throw new TransientException("consume: the consumers have not consumed for "
                                + START_WAIT.toSeconds() + " s: " + consumer.waitingFor().orElse("they stopped"));
                    }
                    if (handled != lastHandled) {
                        lastHandled = handled;
                        idleSince = System.nanoTime();
                    } else if (o.exitWhenIdleSeconds() > 0
                            && System.nanoTime() - idleSince > o.exitWhenIdleSeconds() * 1_000_000_000L) {
                        Optional<String> holding = holding(w, consumer, relay);
                        if (holding.isEmpty()) {
                            break;
                        }
                        if (!holding.equals(said)) {   // once per reason: the progress line goes on meanwhile
                            out.println("  idle " + o.exitWhenIdleSeconds() + " s, not exiting: " + holding.get());
                            said = holding;
                        }
                    }
                }
            }
            tally(w, process, counts, out);
            out.printf("CONSUMED applied=%.0f stale=%.0f dead_lettered=%.0f retried=%.0f%n", counts.applied(),
                    counts.stale(), counts.deadLettered(), counts.retried());
        }
        return 0;
    }

    /**
     * Why {@code consume --exit-when-idle} must not exit yet, or empty once this process holds nothing and the queue
     * is empty: what it holds is read before and after the queue, so a delivery that left the queue in between is
     * seen held. Deciding from the queue's ready count alone exited with prefetched, in-flight and retried messages
     * unsettled (they are not ready), which {@code verify} then reported lost.
     */
    static Optional<String> holding(Wiring w, OrderlessConsumer consumer, boolean relay) {
        Optional<String> waiting = consumer.waitingFor();
        if (waiting.isPresent()) {
            return Optional.of("the consumers wait for " + waiting.get());
        }
        if (!consumer.isConsuming()) {
            return Optional.of("the consumers are not consuming");
        }
        if (consumer.retrying() > 0) {
            return Optional.of(consumer.retrying() + " messages held for a retry");
        }
        if (w.held.held() > 0) {
            return Optional.of("this process holds " + w.held.held() + " deliveries not settled yet");
        }
        long ready;
        try {
            Optional<QueueInformation> queue = QueueTopology.lookup(w.rabbit(), w.options.queue());
            if (queue.isEmpty()) {
                return Optional.of("queue '" + w.options.queue() + "' does not exist");
            }
            ready = queue.get().getMessageCount();
        } catch (TransientException e) {
            return Optional.of(e.getMessage());
        }
        if (ready > 0) {
            return Optional.of(ready + " messages ready in '" + w.options.queue() + "'");
        }
        if (w.held.held() > 0) {
            return Optional.of("this process holds " + w.held.held() + " deliveries not settled yet");
        }
        if (relay && w.outboxEntries().countDocuments() > 0) {
            return Optional.of("outbox entries not relayed yet");
        }
        return Optional.empty();
    }

    /** Only the web application: stamps, records (for {@code verify}) and publishes, for consumers elsewhere. */
    static int publish(Wiring w, PrintStream out) {
        DemoOptions o = w.options;
        if (o.outbox()) {
            return publishToOutbox(w, out);
        }
        w.declareQueues();
        List<Operation> ops = acting(new WebApp(w.stamper(), o.students(), o.classes(), o.seed()), o.ops(), "stamping",
                out);
        List<byte[]> messages = Messages.messages(ops, o);
        w.journal.recordPublished(ops, messages.size(), o.poison());
        long started = System.nanoTime();
        java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
        try (Progress progress = new Progress(out, () -> "  publishing " + (o.protocol() == Protocol.AMQP_1_0
                ? "over AMQP 1.0" : "with confirms") + " to '" + o.queue() + "': "
                + Progress.rate(sent.get(), messages.size(), started))) {
            PublisherOptions publishing = PublisherOptions.ofDefaults();
            dev.orderless.publish.OperationPublisher publisher = w.operationPublisher(publishing);
            int window = publishing.window();
            for (int from = 0; from < messages.size(); from += window) {
                // window by window, so progress shows confirmed messages as they come
                publisher.publishRaw(messages.subList(from, Math.min(messages.size(), from + window)));
                sent.set(Math.min(messages.size(), from + window));
            }
        }
        out.printf("PUBLISHED messages=%d actions=%d poison=%d queue=%s protocol=%s%n", messages.size(), ops.size(),
                o.poison(), o.queue(), o.protocol());
        return 0;
    }

    /** The web application's actions, with a progress line while they are stamped (or recorded): a round trip each. */
    static List<Operation> acting(WebApp web, int count, String doing, PrintStream out) {
        long started = System.nanoTime();
        try (Progress progress = new Progress(out, () -> "  " + doing + " actions: "
                + Progress.rate(web.taken(), count, started))) {
            return web.act(count);
        }
    }

    /** {@code publish --outbox}: each action recorded in the outbox as it happens; the broker is not needed. */
    private static int publishToOutbox(Wiring w, PrintStream out) {
        DemoOptions o = w.options;
        List<Operation> ops = acting(WebApp.recording(w.outbox(), o.students(), o.classes(), o.seed()), o.ops(),
                "recording", out);
        w.journal.recordPublished(ops, ops.size(), 0);
        out.printf("RECORDED actions=%d outbox=%s (a relay publishes them: 'relay', or 'consume --relay')%n", ops.size(),
                Enrollment.OUTBOX);
        return 0;
    }

    static int view(Wiring w, PrintStream out, int segments) throws InterruptedException {
        out.println("view: feeding '" + Enrollment.ROSTERS + "' from '" + Enrollment.STUDENTS + "' " + (segments == 1
                ? "(one active per lease '" + Enrollment.ROSTER_LEASE + "'; run another to see it stand by and take over)"
                : "in " + segments + " segments (a lease each, '" + Enrollment.ROSTER_LEASE + "#i/" + segments
                + "'; run another to see them shared out)"));
        out.println(w.describe());
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Counts counts = new Counts(meters);
        try (StopSignal stop = new StopSignal();
             ConfigurableApplicationContext context = DemoBoot.view(w, meters, segments);
             Progress progress = new Progress(out, () -> String.format("  change events applied to the view: %,.0f",
                     counts.viewEvents()))) {
            ViewFeeder feeder = DemoBoot.rosterFeeder(context);
            ViewFeeder.State last = null;
            java.util.Set<Segment> fed = java.util.Set.of();
            long deadLettered = 0;
            while (!stop.await(500)) {
                if (feeder.state() != last) {
                    last = feeder.state();
                    out.println("  feeder is " + last + feeder.failure().map(f -> ": " + f.getMessage()).orElse(""));
                }
                if (segments > 1 && !feeder.fences().keySet().equals(fed)) {
                    fed = java.util.Set.copyOf(feeder.fences().keySet());
                    out.println("  feeding segments " + fed.stream().map(Segment::index).sorted().toList() + " of "
                            + segments);
                }
                long letters = deadLettered(feeder).orElse(deadLettered);
                if (letters != deadLettered) {
                    deadLettered = letters;
                    out.println("  dead-lettered " + letters + " change events so far (see '" + Enrollment.ROSTERS
                            + "_dead_letters')");
                }
                if (last == ViewFeeder.State.FAILED) {
                    return 1;
                }
            }
        }
        out.println("  stopped: the lease is released (or, if MongoDB did not answer, expires within its ttl)");
        return 0;
    }

    /**
     * The tally is for {@code verify}'s report, not for the work: while MongoDB is away the consumers wait
     * for it (and say so), and this process must not die of a bookkeeping write.
     */
    private static void tally(Wiring w, String process, Counts counts, PrintStream out) {
        try {
            w.journal.tally(process, counts);
        } catch (MongoException e) {
            out.println("  (tally not written, MongoDB did not answer: " + e.getClass().getSimpleName() + ")");
        }
    }

    /** The feeder's dead-letter count, if MongoDB answers; the feeder itself rides out an outage in STANDBY. */
    private static java.util.OptionalLong deadLettered(ViewFeeder feeder) {
        try {
            return java.util.OptionalLong.of(feeder.deadLettered());
        } catch (MongoException | dev.orderless.OrderlessException e) {
            return java.util.OptionalLong.empty();
        }
    }
}
