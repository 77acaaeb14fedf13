package dev.orderless.chaos;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import dev.orderless.demo.compare.Arena;
import dev.orderless.demo.compare.ComparePlan;
import dev.orderless.demo.compare.CompareReport;
import dev.orderless.demo.compare.KafkaArena;
import dev.orderless.demo.compare.KafkaPlan;
import dev.orderless.demo.compare.KafkaReport;
import dev.orderless.testing.kafka.EmbeddedKafka;
import dev.orderless.testing.kafka.KafkaBroker;
import dev.orderless.testing.kafka.KafkaBrokers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * orderless head to head with a single active consumer, hash partitions and unguarded competing consumers:
 * the full plan ({@link ComparePlan#full()}, about ten minutes here), on the real RabbitMQ. Not part of the
 * test run:
 *
 * <pre>
 * mvn -B -q -pl chaos-tests -am verify -Pbench -Dtest=CompareBenchmark
 * </pre>
 *
 * The tables are printed and written to {@code chaos-tests/target/compare.md}; the last line is the
 * {@code COMPARE} line of ratios from this run.
 *
 * <p>{@link #kafka()} runs the Kafka comparison's quick plan ({@link KafkaPlan#quick()}: a share group with orderless
 * against a consumer group with per-partition order, about a minute and a half) on an embedded KRaft broker, or
 * on {@code KAFKA_BOOTSTRAP}'s: in CI's failover invocation ({@code -Pfailover}), and alone with
 * {@code -Pbench -Dtest=CompareBenchmark#kafka}. It writes {@code chaos-tests/target/compare-kafka.md} and prints
 * its {@code COMPARE} line; it asserts nothing about speed.
 */
class CompareBenchmark {
    @Test
    void run() throws Exception {
        try (MongoBackend mongo = Backends.mongo(); RabbitBackend rabbit = RabbitBackends.rabbit()) {
            if (!rabbit.isRabbitMq()) {
                System.out.println("[compare] skipped: it needs RabbitMQ (quorum queues, single active consumers): set RABBITMQ_URI");
            }
            assumeTrue(rabbit.isRabbitMq(), "compare needs RabbitMQ: set RABBITMQ_URI");
            ComparePlan plan = ComparePlan.full();
            try (Arena arena = new Arena(rabbit.uri(), mongo.connectionString(), plan.stall(), plan.rate(),
                    Duration.ofMinutes(5))) {
                CompareReport report = CompareReport.run(arena, plan, System.out);
                String md = "## orderless head to head (" + mongo.description() + ", " + rabbit.description() + ")\n\n"
                        + report.markdown() + "\n" + report.compareLine() + "\n";
                Files.createDirectories(Path.of("target"));
                Files.writeString(Path.of("target/compare.md"), md);
                System.out.println(md);
            }
        }
    }

    @Test
    void kafka() throws Exception {
        KafkaPlan plan = KafkaPlan.quick();
        try (MongoBackend mongo = Backends.mongo(); KafkaBroker kafka = KafkaBrokers.bootstrap(System.getenv())
                .<KafkaBroker>map(KafkaBrokers::external).orElseGet(() -> EmbeddedKafka.start(KafkaPlan.EMBEDDED_BROKER));
             KafkaArena arena = new KafkaArena(kafka.bootstrapServers(), mongo.connectionString(), plan.stall(), plan.rate(),
                     Duration.ofMinutes(3))) {
            KafkaReport report = KafkaReport.run(arena, plan, System.out);
            String md = "## A share group with orderless against a consumer group (" + mongo.description() + ", Kafka at "
                    + kafka.bootstrapServers() + ", load average " + loadAverage() + ")\n\n" + report.markdown() + "\n"
                    + report.compareLine() + "\n";
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target/compare-kafka.md"), md);
            System.out.println(md);
        }
    }

    /** The machine's load when the figures were taken: they are only comparable at a like load. */
    private static String loadAverage() {
        return String.format(java.util.Locale.ROOT, "%.1f",
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
}
