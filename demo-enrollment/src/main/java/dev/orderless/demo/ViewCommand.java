package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.view.Segment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "view", sortOptions = false,
        header = "Only the rosters feeder: follow the students' change stream into the view.",
        description = {
    "Only the class rosters feeder: follows the students' change stream into the rosters view. One",
    "feeder is active per lease; run a second to see it stand by and take over. With --segments N,",
    "the students are split into N segments, each with its own lease: run several to share them out.",
    "Needs only MongoDB."})
final class ViewCommand extends DemoCommand {
    @Mixin
    MongoConnections connections;

    @Option(names = "--segments", paramLabel = "N", description = "segments of the view, each with its own lease;"
            + " the view processes given the same N share them out (default: ${DEFAULT-VALUE})", defaultValue = "1")
    int segments;

    @Override
    public Integer call() throws Exception {
        if (segments < 1 || segments > Segment.MAX) {
            throw new InvalidConfigurationException("--segments must be between 1 and " + Segment.MAX + ", was "
                    + segments);
        }
        DemoOptions options = connections.required(DemoOptions.ofDefaults("view"), cli.env);
        try (Wiring wiring = Wiring.connect(options)) {
            return ProcessCommands.view(wiring, cli.out, segments);
        }
    }
}
