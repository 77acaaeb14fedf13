package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.apply.Operation;
import dev.orderless.history.History;
import dev.orderless.testing.chaos.ChaosResult;
import dev.orderless.testing.chaos.ChaosRun;
import dev.orderless.testing.chaos.ConsumerFactory;
import dev.orderless.testing.chaos.Envelopes;
import dev.orderless.testing.chaos.Fault;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "chaos", sortOptions = false,
        header = "Replay a captured history under chaos: shuffled, duplicated, a consumer killed; compared with the oracle.",
        description = {
    "Publish a recorded history of the students (a file of envelopes, one per line, as 'run --history",
    "--export-history FILE' or 'history --export FILE' write it; or the history collection itself) shuffled,",
    "with duplicates, to a queue of its own, apply it with competing consumers while one is killed, compare",
    "every student with the sequential oracle, and print the [chaos] table. A divergence is shrunk to the",
    "smallest breaking history. Embedded MongoDB and AMQP broker unless --mongo / --rabbit name servers;",
    "it uses a database and queues of its own, and leaves the demo's alone (--queue is unused; --database is",
    "read by --from-history only). With --broker kafka: a topic and a share group of its own, the killed",
    "consumer a process of its own (SIGKILL), CUT_BROKER a restart of the embedded broker. Exit 0 only if it",
    "converged."})
final class ChaosCommand extends DemoCommand {
    @ArgGroup(multiplicity = "1")
    Source source;

    static final class Source {
        @Option(names = "--history", paramLabel = "FILE", order = 1, required = true,
                description = "A file of envelopes, one per line.")
        Path file;

        @Option(names = "--from-history", order = 2, required = true,
                description = "The students' history collection in --database (on --mongo).")
        boolean collection;
    }

    @Option(names = "--consumers", paramLabel = "N", order = 3, defaultValue = "4",
            description = "Competing consumers (default: ${DEFAULT-VALUE}).")
    int consumers;

    @Option(names = "--duplicate-rate", paramLabel = "R", order = 4, defaultValue = "0.3",
            description = "Chance, 0 to 1, that a message is published twice (default: ${DEFAULT-VALUE}).")
    double duplicateRate;

    @Option(names = "--faults", paramLabel = "LIST", order = 5, split = ",", defaultValue = "KILL_CONSUMER",
            description = "Faults to inject, of KILL_CONSUMER, CUT_BROKER, CUT_MONGO (default: ${DEFAULT-VALUE}).")
    List<Fault> faults;

    @Option(names = "--seed", paramLabel = "N", order = 6,
            description = "Seed of the shuffle and duplicates (default: from the clock; the table prints it).")
    Long seed;

    @Mixin
    BrokerChoice broker;

    @Mixin
    Connections connections;

    @Override
    public Integer call() throws Exception {
        if (source.collection && connections.mongo == null && !cli.env.containsKey("MONGODB_URI")) {
            throw new InvalidConfigurationException("--from-history reads the history collection of a MongoDB that"
                    + " outlives a run: pass --mongo (or set MONGODB_URI), or export it to a file with 'run --history"
                    + " --export-history FILE' and use --history FILE");
        }
        List<Operation> fromFile = new ArrayList<>();
        if (source.file != null) {   // before any backend starts: a wrong path is one line now
            if (!java.nio.file.Files.isReadable(source.file)) {
                throw new InvalidConfigurationException("--history " + source.file + ": no such readable file (export"
                        + " one with 'run --history --export-history FILE' or 'history --export FILE')");
            }
            fromFile.addAll(Envelopes.read(source.file, Enrollment.STUDENT_SCHEMA));
        }
        DemoOptions options = broker.applyTo(connections.orEmbedded(DemoOptions.ofDefaults("chaos"), cli.env),
                connections, cli.env);
        try (Wiring wiring = Wiring.connect(options)) {
            List<Operation> ops = new ArrayList<>();
            String from;
            if (source.file != null) {
                ops.addAll(fromFile);
                from = source.file.getFileName().toString();
            } else {
                History history = wiring.history(new SimpleMeterRegistry());
                history.forEachRecorded(ops::add);
                from = history.collection().getNamespace().getCollectionName();
            }
            if (ops.isEmpty()) {
                cli.out.println("no recorded actions in " + from + ": nothing to replay");
                return 1;
            }
            if (options.broker() == Broker.KAFKA) {
                ChaosResult result = new KafkaChaos(wiring).run(from, ops, consumers, duplicateRate, faults,
                        seed != null ? seed : System.nanoTime());
                result.print(cli.out);
                return result.converged() ? 0 : 1;
            }
            ChaosRun run = ChaosRun.of(Enrollment.STUDENT_SCHEMA).withName(from).withCollection(Enrollment.STUDENTS)
                    .withHistory(ops).withDuplicates(duplicateRate)
                    .withConsumers(consumers, ConsumerFactory.standard(Enrollment.STUDENT_SCHEMA))
                    .withFaults(faults.toArray(Fault[]::new));
            if (seed != null) {
                run = run.withSeed(seed);
            }
            ChaosResult result = run.run(wiring.mongoBackend.connectionString(), URI.create(wiring.rabbitUri()));
            result.print(cli.out);
            return result.converged() ? 0 : 1;
        }
    }
}
