package dev.orderless.demo;

import com.mongodb.MongoException;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.outbox.OutboxRelay;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "relay", sortOptions = false,
        header = "Only the outbox relay: publish what 'publish --outbox' recorded.",
        description = {
    "Only the outbox relay: claims the actions recorded in the outbox, publishes them with confirms and",
    "removes each once the broker confirmed it. Run several at once; kill one with SIGKILL and the others",
    "publish what it had claimed once its claims expire. Backs off while RabbitMQ is down."})
final class RelayCommand extends DemoCommand {
    @Option(names = "--exit-when-empty", paramLabel = "SECONDS", order = 1, defaultValue = "0",
            description = "Exit once the outbox has stayed empty this long; 0: never (default: ${DEFAULT-VALUE}).")
    int exitWhenEmpty;

    @Option(names = "--batch", paramLabel = "N", order = 2, defaultValue = "500",
            description = "Entries claimed and published together, 1 to 1000 (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--claim-ttl", paramLabel = "SECONDS", order = 3, defaultValue = "10",
            description = "How long a claim keeps the other relays off its entries (default: ${DEFAULT-VALUE}).")
    int claimTtl;

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        if (exitWhenEmpty < 0 || exitWhenEmpty > 86_400) {
            throw new InvalidConfigurationException("--exit-when-empty must be between 0 and 86400, was " + exitWhenEmpty);
        }
        if (batch < 1 || batch > 1000) {
            throw new InvalidConfigurationException("--batch must be between 1 and 1000, was " + batch);
        }
        if (claimTtl < 1 || claimTtl > 3600) {
            throw new InvalidConfigurationException("--claim-ttl must be between 1 and 3600, was " + claimTtl);
        }
        DemoOptions options = connections.required(DemoOptions.ofDefaults("relay"), cli.env);
        try (Wiring wiring = Wiring.connect(options)) {
            return relay(wiring, cli.out);
        }
    }

    private int relay(Wiring w, PrintStream out) throws InterruptedException {
        w.declareQueues();
        out.println("relay: publishing outbox '" + Enrollment.OUTBOX + "' to '" + w.options.queue() + "' with confirms"
                + (exitWhenEmpty > 0 ? ", exiting once it stayed empty " + exitWhenEmpty + " s" : ", until stopped"));
        out.println(w.describe());
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (StopSignal stop = new StopSignal();
             OutboxRelay relay = w.startRelay(meters, batch, Duration.ofSeconds(claimTtl));
             Progress progress = new Progress(out, () -> String.format("  published %,d; %,d waiting at the last"
                     + " count (once a second)%s", relay.published(), relay.backlog(), relay.parked() > 0
                     ? String.format("; %,d parked (see 'outbox parked list')", relay.parked()) : ""))) {
            OutboxRelay.State last = OutboxRelay.State.RUNNING;
            long emptySince = System.nanoTime();
            while (!stop.await(200)) {
                if (relay.state() != last) {
                    last = relay.state();
                    out.println("  relay is " + last + relay.problem().map(p -> ": " + p).orElse(""));
                }
                if (exitWhenEmpty > 0) {
                    if (waiting(w) != 0) {
                        emptySince = System.nanoTime();
                    } else if (System.nanoTime() - emptySince > exitWhenEmpty * 1_000_000_000L) {
                        break;
                    }
                }
            }
            out.printf("RELAYED published=%d%n", relay.published());
        }
        return 0;
    }

    /** Entries in the outbox, or -1 while MongoDB does not answer (the relay rides that out itself). */
    private static long waiting(Wiring w) {
        try {
            return w.outboxEntries().countDocuments();
        } catch (MongoException e) {
            return -1;
        }
    }
}
