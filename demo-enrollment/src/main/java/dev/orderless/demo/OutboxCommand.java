package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.outbox.Outbox;
import dev.orderless.outbox.ParkedEntries;
import dev.orderless.outbox.ParkedEntry;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "outbox", sortOptions = false,
        header = "The outbox: how much waits, and the parked entries (list, retry, purge).",
        description = {
    "status (the default): the entries waiting, how long the oldest has waited, and how many are parked.",
    "parked list: the first --max parked entries (no relay publishes them: their own message kept failing, or",
    "they are not operations), each with its id and why. parked retry: the entries named by --id (or --all)",
    "due again, for the relays to publish. parked purge: the entries named by --id (or --all) dropped for good.",
    "Needs only MongoDB."})
final class OutboxCommand extends DemoCommand {
    @Mixin
    MongoConnections connections;

    @Parameters(index = "0", arity = "0..1", defaultValue = "status", paramLabel = "status|parked",
            description = "What to look at (default: ${DEFAULT-VALUE}).")
    String what;

    @Parameters(index = "1", arity = "0..1", defaultValue = "list", paramLabel = "list|retry|purge",
            description = "With 'parked': what to do (default: ${DEFAULT-VALUE}).")
    String action;

    @Option(names = "--id", paramLabel = "ID", description = "An entry to retry or purge (as 'parked list' shows it); repeat for more.")
    List<String> ids = new ArrayList<>();

    @Option(names = "--all", description = "Retry or purge every parked entry.")
    boolean all;

    @Option(names = "--max", defaultValue = "20", description = "List at most this many (default: ${DEFAULT-VALUE}).")
    int max;

    @Override
    public Integer call() throws Exception {
        if (!List.of("status", "parked").contains(what)) {
            throw new InvalidConfigurationException("outbox shows 'status' or 'parked', not '" + what + "'");
        }
        if (!List.of("list", "retry", "purge").contains(action)) {
            throw new InvalidConfigurationException("outbox parked does 'list', 'retry' or 'purge', not '" + action + "'");
        }
        if (max < 1) {
            throw new InvalidConfigurationException("--max must be at least 1, was " + max);
        }
        boolean changes = what.equals("parked") && !action.equals("list");
        if (changes && ids.isEmpty() == !all) {
            throw new InvalidConfigurationException("outbox parked " + action + " needs either --id ID (repeatable) or"
                    + " --all");
        }
        DemoOptions options = connections.required(DemoOptions.ofDefaults("outbox"), cli.env);
        try (Wiring wiring = Wiring.connect(options)) {
            Outbox outbox = wiring.outbox();
            ParkedEntries parked = outbox.parked();
            if (what.equals("status")) {
                cli.out.println("OUTBOX '" + outbox.name() + "': waiting=" + outbox.backlog() + " oldest="
                        + outbox.oldest().map(d -> d.toSeconds() + "s").orElse("none") + " parked=" + parked.count());
                return 0;
            }
            switch (action) {
                case "list" -> {
                    List<ParkedEntry> entries = parked.list(max);
                    long count = parked.count();
                    cli.out.println("PARKED " + count + " in '" + outbox.name() + "'"
                            + (count > entries.size() ? " (the first " + entries.size() + " below)" : ""));
                    entries.forEach(e -> cli.out.println("  " + e.id() + " " + e.entity() + " seq " + e.seq()
                            + ", recorded " + e.recordedAt() + ", parked " + e.parkedAt() + ": " + e.reason()));
                }
                case "retry" -> cli.out.println("RETRIED " + (all ? parked.retryAll() : parked.retry(ids))
                        + " (due again: a running relay publishes them)");
                default -> cli.out.println("PURGED " + (all ? parked.purgeAll() : parked.purge(ids)));
            }
            return 0;
        }
    }
}
