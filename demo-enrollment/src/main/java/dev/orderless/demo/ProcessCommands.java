package dev.orderless.demo;

import dev.orderless.amqp.OperationConsumer;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The separate-process commands for a real deployment: {@code consume} (only the consumers; run several,
 * kill one, lose nothing) and {@code view} (only the roster feeder; run two, watch the lease hand over).
 * Both stop gracefully on SIGTERM or Ctrl-C.
 */
final class ProcessCommands {
    private ProcessCommands() {
    }

    static int consume(Wiring w, PrintStream out) throws InterruptedException {
        DemoOptions o = w.options;
        out.println("consume: " + o.consumers() + " consumers" + (o.exitWhenIdleSeconds() > 0
                ? ", exiting after " + o.exitWhenIdleSeconds() + " s idle with an empty queue" : ", until stopped"));
        out.println(w.describe());
        w.declareQueues();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        Counts counts = new Counts(meters);
        CountDownLatch stop = stopOnSignal();
        RabbitAdmin admin = new RabbitAdmin(w.rabbit);
        try (OperationConsumer consumer = w.startConsumers(meters);
             Progress progress = new Progress(out, () -> String.format("  applied %,.0f, stale %,.0f, dead-lettered %,.0f,"
                     + " retried %,.0f", counts.applied(), counts.stale(), counts.deadLettered(), counts.retried()))) {
            double lastHandled = -1;
            long idleSince = System.nanoTime();
            while (stop.getCount() > 0) {
                stop.await(200, java.util.concurrent.TimeUnit.MILLISECONDS);
                double handled = counts.handled();
                if (handled != lastHandled) {
                    lastHandled = handled;
                    idleSince = System.nanoTime();
                } else if (o.exitWhenIdleSeconds() > 0
                        && System.nanoTime() - idleSince > o.exitWhenIdleSeconds() * 1_000_000_000L) {
                    var info = admin.getQueueInfo(o.queue());
                    if (info != null && info.getMessageCount() == 0) {
                        break;
                    }
                }
            }
        }
        out.printf("CONSUMED applied=%.0f stale=%.0f dead_lettered=%.0f retried=%.0f%n", counts.applied(),
                counts.stale(), counts.deadLettered(), counts.retried());
        return 0;
    }

    /** Only the web application: stamps and publishes, for consumers running elsewhere. */
    static int publish(Wiring w, PrintStream out) {
        DemoOptions o = w.options;
        w.declareQueues();
        java.util.List<dev.orderless.apply.Operation> ops = new WebApp(dev.orderless.stamp.MongoCounterStamper.create(
                w.db.getCollection("seq_counters", org.bson.BsonDocument.class)), o.students(), o.classes(), o.seed())
                .act(o.ops());
        java.util.List<byte[]> messages = Outbox.messages(ops, o);
        dev.orderless.publish.ConfirmingPublisher.toQueue(w.rabbit, o.queue(),
                dev.orderless.publish.PublisherOptions.ofDefaults()).publishRaw(messages);
        out.printf("PUBLISHED messages=%d actions=%d poison=%d queue=%s%n", messages.size(), ops.size(), o.poison(),
                o.queue());
        return 0;
    }

    static int view(Wiring w, PrintStream out) throws InterruptedException {
        out.println("view: feeding '" + Enrollment.ROSTERS + "' from '" + Enrollment.STUDENTS + "' (one active per lease '"
                + Enrollment.ROSTER_LEASE + "'; run another to see it stand by and take over)");
        out.println(w.describe());
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        CountDownLatch stop = stopOnSignal();
        try (ViewFeeder feeder = w.startRosterFeeder(meters)) {
            ViewFeeder.State last = null;
            long deadLettered = 0;
            while (stop.getCount() > 0) {
                stop.await(500, java.util.concurrent.TimeUnit.MILLISECONDS);
                if (feeder.state() != last) {
                    last = feeder.state();
                    out.println("  feeder is " + last + feeder.failure().map(f -> ": " + f.getMessage()).orElse(""));
                }
                long letters = feeder.deadLettered();
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
        return 0;
    }

    private static CountDownLatch stopOnSignal() {
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown, "stop-on-signal"));
        return stop;
    }
}
