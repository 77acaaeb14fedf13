package dev.orderless.demo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "publish", sortOptions = false,
        header = "Only the web application: stamp, record and publish the actions.",
        description = {
    "Only the web application: stamp the actions (in MongoDB) and publish them with confirms, for",
    "consumers running elsewhere. Records what it published in the demo database, for 'verify'.",
    "With --outbox it only records them in the outbox (RabbitMQ may be down); a relay publishes them."})
final class PublishCommand extends DemoCommand {
    @Mixin
    Workload workload;

    @Mixin
    Connections connections;

    @Option(names = "--protocol", paramLabel = "PROTOCOL", defaultValue = "amqp-0-9-1",
            converter = Protocol.Converter.class, completionCandidates = Protocol.Values.class,
            description = "amqp-0-9-1 (publisher confirms), or amqp-1.0 (RabbitMQ 4: the broker's accepted outcome)"
                    + " (default: ${DEFAULT-VALUE}).")
    Protocol protocol;

    @Override
    public Integer call() {
        DemoOptions options = connections.required(workload.applyTo(DemoOptions.ofDefaults("publish"))
                        .withProtocol(protocol), cli.env,
                !workload.outbox);
        try (Wiring wiring = Wiring.connect(options)) {
            return ProcessCommands.publish(wiring, cli.out);
        }
    }
}
