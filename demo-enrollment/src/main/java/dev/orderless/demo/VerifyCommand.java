package dev.orderless.demo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "verify", sortOptions = false,
        header = "Compare students with the oracle and rosters with students, dropping nothing.",
        description = {
    "Check a several-process run without dropping anything: compare the students with the sequential",
    "oracle of everything 'publish' (or 'run') recorded, then the rosters with the students, feeding the",
    "view here (standing by if a 'view' process holds the lease) until they match or the wait runs out.",
    "Prints the same RESULT line as 'run'; exit 0 only if converged, nothing lost, rosters consistent."})
final class VerifyCommand extends DemoCommand {
    @Option(names = "--wait", paramLabel = "SECONDS", order = 1, defaultValue = "60",
            description = "How long the rosters may take to catch up with the students (default: ${DEFAULT-VALUE}).")
    int waitSeconds;

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        DemoOptions options = connections.required(DemoOptions.ofDefaults("verify").withWait(waitSeconds), cli.env);
        try (Wiring wiring = Wiring.connect(options)) {
            return new Verify(wiring, cli.out).verify();
        }
    }
}
