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
    "and AMQP broker, which go away with it. With --broker kafka, the same through a Kafka topic and one share",
    "group (an embedded broker unless --kafka or KAFKA_BOOTSTRAP names one). Exit 0 only if converged, nothing",
    "lost, rosters consistent."})
final class RunCommand extends DemoCommand {
    @Mixin
    Workload workload;

    @Option(names = "--consumers", paramLabel = "N", order = 20, defaultValue = "4",
            description = "Competing consumers (default: ${DEFAULT-VALUE}).")
    int consumers;

    @Option(names = "--history", order = 21,
            description = "Record every action in the students' history before applying it (see 'history').")
    boolean history;

    @Option(names = "--export-history", paramLabel = "FILE", order = 22,
            description = "With --history: write every recorded action to FILE at the end (see 'chaos').")
    java.nio.file.Path exportHistory;

    @Option(names = "--console", order = 23,
            description = "After the result, keep the consumers and the feeder running with the operator console on"
                    + " 127.0.0.1 (its address and logins are printed) until Ctrl-C.")
    boolean console;

    @Option(names = "--console-port", paramLabel = "PORT", order = 24, defaultValue = "8080",
            description = "With --console, its port; 0 for any free port (default: ${DEFAULT-VALUE}).")
    int consolePort;

    @Mixin
    BrokerChoice broker;

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        DemoOptions options = broker.applyTo(connections.orEmbedded(
                workload.applyTo(DemoOptions.ofDefaults("run")).withConsumers(consumers, 0).withHistory(history), cli.env),
                connections, cli.env);
        if (console && options.broker() == Broker.KAFKA) {
            throw new dev.orderless.InvalidConfigurationException("--console shows RabbitMQ consumers; with --broker"
                    + " kafka leave it out");
        }
        if (exportHistory != null && !history) {
            throw new dev.orderless.InvalidConfigurationException("--export-history needs --history: it writes what"
                    + " the history recorded");
        }
        try (Wiring wiring = Wiring.connect(options)) {
            int code = new DemoRun(wiring, cli.out, console ? java.util.OptionalInt.of(consolePort)
                    : java.util.OptionalInt.empty()).run();
            if (exportHistory != null) {
                HistoryCommand.export(wiring.history(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()),
                        exportHistory, cli.out);
            }
            return code;
        }
    }
}
