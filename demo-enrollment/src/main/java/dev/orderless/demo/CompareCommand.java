package dev.orderless.demo;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.demo.compare.Arena;
import dev.orderless.demo.compare.ComparePlan;
import dev.orderless.demo.compare.CompareReport;
import dev.orderless.demo.compare.KafkaArena;
import dev.orderless.demo.compare.KafkaPlan;
import dev.orderless.demo.compare.KafkaReport;
import dev.orderless.testing.kafka.EmbeddedKafka;
import dev.orderless.testing.kafka.KafkaBroker;
import dev.orderless.testing.kafka.KafkaBrokers;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "compare", sortOptions = false,
        header = "orderless head to head with a single active consumer, hash partitions and plain competing consumers;"
                + " on Kafka (--broker kafka), a share group with orderless against a consumer group.",
        description = {
    "Apply the same enrollment actions (Zipf-skewed students, 2 ms added to every MongoDB round trip) with",
    "each way of keeping order, on the same RabbitMQ and MongoDB, and print what each achieved: messages/s,",
    "latency when a handler is stuck, students that diverged from the sequential oracle. Needs a real",
    "RabbitMQ (quorum queues, single active consumers); MongoDB is embedded unless --mongo names one.",
    "docs/compare.md says what each figure means and what the full benchmark measures."})
final class CompareCommand extends DemoCommand {
    @Option(names = "--quick", order = 1,
            description = "The short plan: the defaults teams run, one fault, in about a minute.")
    boolean quick;

    @Option(names = "--consumers", paramLabel = "N", order = 2, defaultValue = "4",
            description = "Consumers of each contestant in the quick plan (default: ${DEFAULT-VALUE}).")
    int consumers;

    @Option(names = "--messages", paramLabel = "N", order = 3, defaultValue = "1500",
            description = "Messages per throughput trial in the quick plan (default: ${DEFAULT-VALUE}).")
    int messages;

    @Option(names = "--uniform", order = 4,
            description = "Quick plan: uniform keys over 10k students instead of Zipf-skewed ones over 100k.")
    boolean uniform;

    @Option(names = "--runs", paramLabel = "N", order = 5, defaultValue = "1",
            description = "Run the plan N times and end with the medians (single runs vary by about a third;"
                    + " default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--rabbit", paramLabel = "URI", order = 6,
            description = "RabbitMQ AMQP URI, e.g. amqp://guest:guest@localhost:5672/%%2F (default: $RABBITMQ_URI).")
    String rabbit;

    @Option(names = "--mongo", paramLabel = "URI", order = 7,
            description = "MongoDB connection string (default: an embedded MongoDB in this process).")
    String mongo;

    @Option(names = "--broker", paramLabel = "rabbitmq|kafka", order = 8, defaultValue = "rabbitmq",
            description = "rabbitmq: orderless against RabbitMQ's ways to keep order; kafka: a share group with orderless"
                    + " against a consumer group with per-partition order (default: ${DEFAULT-VALUE}).")
    String broker;

    @Option(names = "--kafka", paramLabel = "BOOTSTRAP", order = 9,
            description = "With --broker kafka: a Kafka 4.2 or later with share groups, host:port (default:"
                    + " $KAFKA_BOOTSTRAP, else an embedded broker in this process).")
    String kafka;

    @Override
    public Integer call() {
        if (runs < 1) {
            throw new InvalidConfigurationException("'compare --runs' must be at least 1, was " + runs);
        }
        if ("kafka".equals(broker)) {
            if (uniform) {
                throw new InvalidConfigurationException("'compare --uniform' is for --broker rabbitmq: the Kafka plan drains"
                        + " Zipf and uniform keys both");
            }
            return kafka();
        }
        if (!"rabbitmq".equals(broker)) {
            throw new InvalidConfigurationException("'compare --broker' is rabbitmq or kafka (as for run), was '" + broker + "'");
        }
        if (kafka != null) {
            throw new InvalidConfigurationException("'compare --kafka' names a Kafka for --broker kafka only");
        }
        String rabbitUri = MongoConnections.chosen(rabbit, cli.env, "RABBITMQ_URI").orElseThrow(() ->
                new InvalidConfigurationException("'compare' needs a RabbitMQ (quorum queues and single active"
                        + " consumers, which the embedded broker lacks): pass --rabbit or set RABBITMQ_URI"));
        ComparePlan plan = quick ? ComparePlan.quick(consumers, messages, uniform) : ComparePlan.full();
        try (MongoBackend backend = mongo == null ? Backends.startMongo() : Backends.mongo(Optional.of(mongo));
             Arena arena = new Arena(URI.create(rabbitUri), backend.connectionString(), plan.stall(), plan.rate(),
                     Duration.ofMinutes(3))) {
            cli.out.println("[compare] " + plan.name() + " plan: " + plan.throughput().size() + " throughput and "
                    + plan.faults().size() + " fault trials");
            List<CompareReport> reports = new ArrayList<>();
            for (int run = 1; run <= runs; run++) {
                if (runs > 1) {
                    cli.out.println("[compare] run " + run + " of " + runs);
                }
                CompareReport report = CompareReport.run(arena, plan, cli.out);
                reports.add(report);
                cli.out.println();
                cli.out.println(report.markdown());
                cli.out.println(runs > 1 ? "[compare] run " + run + ": " + report.compareLine() : report.compareLine());
            }
            if (runs > 1) {
                cli.out.println();
                cli.out.println(CompareReport.medians(reports));
                cli.out.println(CompareReport.medianLine(reports));
            }
            return 0;
        }
    }

    /**
     * The Kafka comparison: the quick plan (--messages records per drain) or the full one, on the named Kafka or an
     * embedded one; with --runs N, each run's line and the medians.
     */
    private Integer kafka() {
        KafkaPlan plan = quick ? KafkaPlan.quick(messages) : KafkaPlan.full();
        Optional<String> bootstrap = MongoConnections.chosen(kafka, cli.env, KafkaBrokers.KAFKA_BOOTSTRAP);
        try (KafkaBroker kafkaBroker = bootstrap.map(KafkaBrokers::external)
                .orElseGet(() -> EmbeddedKafka.start(KafkaPlan.EMBEDDED_BROKER));
             MongoBackend backend = mongo == null ? Backends.startMongo() : Backends.mongo(Optional.of(mongo));
             KafkaArena arena = new KafkaArena(kafkaBroker.bootstrapServers(), backend.connectionString(), plan.stall(),
                     plan.rate(), Duration.ofMinutes(3))) {
            cli.out.println("[compare] kafka " + plan.name() + " plan on " + kafkaBroker.bootstrapServers() + ": "
                    + plan.throughput().size() + " throughput and " + plan.faults().size() + " fault trials");
            List<KafkaReport> reports = new ArrayList<>();
            for (int run = 1; run <= runs; run++) {
                KafkaReport report = KafkaReport.run(arena, plan, cli.out);
                cli.out.println();
                cli.out.println(report.markdown());
                reports.add(report);
                cli.out.println(runs > 1 ? "[compare] run " + run + ": " + report.compareLine() : report.compareLine());
            }
            if (runs > 1) {
                cli.out.println(KafkaReport.medianLine(reports));
            }
            return 0;
        }
    }
}
