package dev.orderless.demo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

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

    @Override
    public Integer call() {
        DemoOptions options = connections.required(workload.applyTo(DemoOptions.ofDefaults("publish")), cli.env,
                !workload.outbox);
        try (Wiring wiring = Wiring.connect(options)) {
            return ProcessCommands.publish(wiring, cli.out);
        }
    }
}
