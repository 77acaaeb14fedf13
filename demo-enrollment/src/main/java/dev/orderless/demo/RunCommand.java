package dev.orderless.demo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "run", sortOptions = false,
        header = "Everything in one process, on embedded backends unless given URIs; compares with the oracle.",
        description = {
    "The whole story in one process: stamp and publish the actions, apply them with competing consumers,",
    "feed the rosters view, then compare every student with the sequential oracle. Starts from nothing:",
    "drops the demo's collections and purges its queues. With no URI it starts its own embedded MongoDB",
    "and AMQP broker, which go away with it. Exit 0 only if converged, nothing lost, rosters consistent."})
final class RunCommand extends DemoCommand {
    @Mixin
    Workload workload;

    @Option(names = "--consumers", paramLabel = "N", order = 20, defaultValue = "4",
            description = "Competing consumers (default: ${DEFAULT-VALUE}).")
    int consumers;

    @Option(names = "--history", order = 21,
            description = "Record every action in the students' history before applying it (see 'history').")
    boolean history;

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        DemoOptions options = connections.orEmbedded(
                workload.applyTo(DemoOptions.ofDefaults("run")).withConsumers(consumers, 0).withHistory(history), cli.env);
        try (Wiring wiring = Wiring.connect(options)) {
            return new DemoRun(wiring, cli.out).run();
        }
    }
}
