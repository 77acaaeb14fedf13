package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.broker.QueueTopology;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "dead-letters", sortOptions = false,
        header = "List the dead letters by kind; replay, park or purge them.",
        description = {
    "list (the default): the letters among the first --max, by kind and reason, with counts and sample entities;",
    "every letter stays. replay: up to --max letters (of --kind only, if given) back to the work queue, each",
    "removed from the dead-letter queue once the broker confirmed its copy; a letter dead-lettered longer",
    "ago than --grace stays, since it could only end beyond the horizon. park: up to --max letters to the",
    "parking queue (<dead-letter queue>.parked), kept out of the way. purge: up to --max letters dropped."})
final class DeadLettersCommand extends DemoCommand {
    @Mixin
    Connections connections;

    @Parameters(index = "0", arity = "0..1", defaultValue = "list", paramLabel = "list|replay|park|purge",
            description = "What to do (default: ${DEFAULT-VALUE}).")
    String action;

    @Option(names = "--kind", paramLabel = "KIND", description = "Replay, park or purge only this kind: bad_input,"
            + " unknown_field, unsupported_envelope, oversized, beyond_horizon, no_progress, too_large, held_too_long, unknown.")
    Optional<String> kind = Optional.empty();

    @Option(names = "--max", defaultValue = "100", description = "At most this many letters (default: ${DEFAULT-VALUE}).")
    int max;

    @Option(names = "--grace", defaultValue = "1d", paramLabel = "DURATION",
            description = "The tombstone grace, as 7d, 12h, 30m or ISO-8601 (default: ${DEFAULT-VALUE}): older letters"
                    + " are not replayed.")
    Duration grace;

    @Override
    public Integer call() throws Exception {
        if (!List.of("list", "replay", "park", "purge").contains(action)) {
            throw new InvalidConfigurationException("dead-letters does 'list', 'replay', 'park' or 'purge', not '"
                    + action + "'");
        }
        if (max < 1) {
            throw new InvalidConfigurationException("--max must be at least 1, was " + max);
        }
        DeadLetterQueue.requireKind(kind);   // before connecting: a typo would otherwise do nothing, and say so
        DemoOptions options = connections.required(DemoOptions.ofDefaults("dead-letters"), cli.env);
        try (Wiring wiring = Wiring.connect(options)) {
            DeadLetterQueue letters = DeadLetterQueue.of(wiring.rabbit(), options.queue(), options.deadLetterQueue());
            if (action.equals("list")) {
                List<DeadLetterQueue.Group> groups = letters.list(max);
                long total = groups.stream().mapToLong(DeadLetterQueue.Group::count).sum();
                cli.out.println("DEAD LETTERS in '" + options.deadLetterQueue() + "': " + total
                        + (total == max ? " (looked at the first " + max + ")" : "")
                        + (total == 0 ? "" : ", by kind and reason:"));
                groups.forEach(g -> cli.out.println("  " + g.kind() + " " + g.count() + ": " + g.reason()
                        + (g.entities().isEmpty() ? "" : " [entities " + String.join(", ", g.entities())
                        + (g.count() > g.entities().size() ? ", ..." : "") + "]")));
                return 0;
            }
            if (action.equals("park")) {
                cli.out.println("PARKED " + letters.park(kind, max) + " to '"
                        + QueueTopology.parkingQueue(options.deadLetterQueue()) + "'");
                return 0;
            }
            if (action.equals("purge")) {
                cli.out.println("PURGED " + letters.purge(kind, max) + " from '" + options.deadLetterQueue() + "'");
                return 0;
            }
            DeadLetterQueue.Replay replay = letters.replay(kind, max, grace, Clock.systemUTC());
            cli.out.println("REPLAYED " + replay.replayed() + " to '" + options.queue() + "'"
                    + (replay.refused().isEmpty() ? "" : "; refused as older than " + grace + ": " + replay.refused()));
            return 0;
        }
    }
}
