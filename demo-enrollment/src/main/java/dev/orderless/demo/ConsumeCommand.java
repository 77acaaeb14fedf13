package dev.orderless.demo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "consume", sortOptions = false,
        header = "Only the consumers: apply the queue to the students until stopped.",
        description = {
    "Only the consumers: apply the queue's messages to the students until stopped (Ctrl-C or SIGTERM",
    "stops gracefully). Run several at once; kill one with SIGKILL and the others finish its work."})
final class ConsumeCommand extends DemoCommand {
    @Option(names = "--consumers", paramLabel = "N", order = 1, defaultValue = "4",
            description = "Competing consumers in this process (default: ${DEFAULT-VALUE}).")
    int consumers;

    @Option(names = "--exit-when-idle", paramLabel = "SECONDS", order = 2, defaultValue = "0",
            description = "Exit after this long with nothing handled, nothing held (every delivery settled) and an empty"
                    + " queue; 0: never (default: ${DEFAULT-VALUE}).")
    int exitWhenIdle;

    @Option(names = "--relay", order = 3,
            description = "Also run an outbox relay here, publishing what 'publish --outbox' recorded.")
    boolean relay;

    @Option(names = "--history", order = 4,
            description = "Record every action in the students' history before applying it (see 'history').")
    boolean history;

    @Option(names = "--protocol", paramLabel = "PROTOCOL", order = 5, defaultValue = "amqp-0-9-1",
            converter = Protocol.Converter.class, completionCandidates = Protocol.Values.class,
            description = "amqp-0-9-1, or amqp-1.0 (RabbitMQ 4: the broker dead-letters poison itself, once whenever a consumer dies)"
                    + " (default: ${DEFAULT-VALUE}).")
    Protocol protocol;

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        DemoOptions options = connections.required(
                DemoOptions.ofDefaults("consume").withConsumers(consumers, exitWhenIdle).withHistory(history)
                        .withProtocol(protocol), cli.env,
                true);
        try (Wiring wiring = Wiring.connect(options)) {
            return ProcessCommands.consume(wiring, cli.out, relay);
        }
    }
}
