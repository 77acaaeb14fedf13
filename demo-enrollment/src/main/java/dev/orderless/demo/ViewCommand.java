package dev.orderless.demo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "view", sortOptions = false,
        header = "Only the rosters feeder: follow the students' change stream into the view.",
        description = {
    "Only the class rosters feeder: follows the students' change stream into the rosters view. One",
    "feeder is active per lease; run a second to see it stand by and take over. Needs only MongoDB."})
final class ViewCommand extends DemoCommand {
    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        DemoOptions options = connections.required(DemoOptions.ofDefaults("view"), cli.env, false);
        try (Wiring wiring = Wiring.connect(options)) {
            return ProcessCommands.view(wiring, cli.out);
        }
    }
}
