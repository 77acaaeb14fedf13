package dev.orderless.demo.compare;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Runs a {@link KafkaPlan} in a {@link KafkaArena} and writes what it measured: a line per trial as it ends, then
 * the tables (Markdown) and one {@code COMPARE} line of the share group with orderless against the consumer group,
 * measured side by side in this run.
 */
public final class KafkaReport {
    private final KafkaPlan plan;
    private final List<KafkaTrialResult> results;

    KafkaReport(KafkaPlan plan, List<KafkaTrialResult> results) {
        this.plan = plan;
        this.results = new ArrayList<>(results);
    }

    /** Runs every trial of {@code plan}, printing a line per trial to {@code progress}. */
    public static KafkaReport run(KafkaArena arena, KafkaPlan plan, PrintStream progress) {
        KafkaReport report = new KafkaReport(plan, List.of());
        if (!plan.throughput().isEmpty()) {
            // the JIT compiles the clients, the driver and the embedded server on the way: not the first trial's cost
            progress.println("[compare] kafka: warming up (not measured)");
            KafkaTrial first = plan.throughput().get(0);
            CompareWorkload workload = new CompareWorkload(first.workload().keys(), Math.min(2000, plan.messages()),
                    first.workload().seed() + 1);
            for (KafkaContestant contestant : KafkaContestant.values()) {
                arena.run(new KafkaTrial(contestant, workload, Fault.NONE, first.consumers(), first.partitions(),
                        first.latency()));
            }
        }
        for (KafkaTrial trial : plan.throughput()) {
            report.add(arena.run(trial), progress);
        }
        for (KafkaTrial trial : plan.faults()) {
            report.add(arena.run(trial), progress);
        }
        return report;
    }

    private void add(KafkaTrialResult result, PrintStream progress) {
        results.add(result);
        KafkaTrial t = result.trial();
        TrialResult r = result.figures();
        progress.printf(Locale.ROOT, "[compare] kafka %-44s %-8s %-16s %3s: %7.0f msg/s, %5.1f per round trip, %6.1f µs CPU/msg,"
                        + " unrelated p99 %.0f ms, diverged %d%n",
                t.contestant().label, t.workload().keys().name(), t.fault().label, t.consumers() + "c", r.perSecond(),
                r.perRoundTrip(), result.cpuPerMessage(), r.unrelated().p99(), r.diverged());
    }

    /** What each trial measured, in the order run. */
    public List<KafkaTrialResult> results() {
        return List.copyOf(results);
    }

    private Optional<KafkaTrialResult> find(KafkaContestant contestant, Fault fault, Predicate<KafkaTrial> also) {
        return results.stream().filter(r -> r.trial().contestant() == contestant && r.trial().fault() == fault
                && also.test(r.trial())).findFirst();
    }

    private Optional<KafkaTrialResult> drain(KafkaContestant contestant, String keys) {
        return drain(contestant, keys, plan.consumers());
    }

    private Optional<KafkaTrialResult> drain(KafkaContestant contestant, String keys, int consumers) {
        return find(contestant, Fault.NONE, t -> t.workload().keys().name().equals(keys) && t.consumers() == consumers);
    }

    /** Scale-out: messages/s of the Zipf drain with {@code to} consumers over that with 1; NaN if either is missing. */
    private double gain(KafkaContestant contestant, int to) {
        Optional<KafkaTrialResult> one = drain(contestant, "zipf", 1);
        Optional<KafkaTrialResult> many = drain(contestant, "zipf", to);
        return one.isPresent() && many.isPresent() ? many.get().figures().perSecond() / one.get().figures().perSecond()
                : Double.NaN;
    }

    /** {@code figure} of the share group over the consumer group's in the same kind of trial; NaN if either is missing. */
    private double shareOverGroup(Function<KafkaContestant, Optional<KafkaTrialResult>> trial,
                                  Function<KafkaTrialResult, Double> figure) {
        Optional<Double> share = trial.apply(KafkaContestant.SHARE_GROUP).map(figure);
        Optional<Double> group = trial.apply(KafkaContestant.CONSUMER_GROUP).map(figure);
        return share.isPresent() && group.isPresent() ? share.get() / group.get() : Double.NaN;
    }

    private static double of(Optional<KafkaTrialResult> result, Function<KafkaTrialResult, Double> figure) {
        return result.map(figure).orElse(Double.NaN);
    }

    private int diverged(KafkaContestant contestant) {
        return results.stream().filter(r -> r.trial().contestant() == contestant).mapToInt(r -> r.figures().diverged()).sum();
    }

    /**
     * The one line a script reads: the share group with orderless over the consumer group, from this run.
     * Messages/s on Zipf and on uniform keys, the scale-out gain (1 to 2 x partitions consumers), and the stuck
     * trial's p99 of unrelated keys given the other way round (the consumer group's over the share group's), so
     * that above 1 is the share group's advantage throughout; then each side's own figures.
     */
    public String compareLine() {
        int c = plan.consumers();
        Function<KafkaTrialResult, Double> perSecond = r -> r.figures().perSecond();
        Function<KafkaTrialResult, Double> perRoundTrip = r -> r.figures().perRoundTrip();
        Function<KafkaTrialResult, Double> cpu = KafkaTrialResult::cpuPerMessage;
        Function<KafkaContestant, Optional<KafkaTrialResult>> zipf = k -> drain(k, "zipf");
        Function<KafkaContestant, Optional<KafkaTrialResult>> uniform = k -> drain(k, "uniform");
        Function<KafkaContestant, Optional<KafkaTrialResult>> stuck = k -> find(k, Fault.STUCK, t -> true);
        int to = 2 * plan.partitions();
        KafkaContestant share = KafkaContestant.SHARE_GROUP;
        KafkaContestant group = KafkaContestant.CONSUMER_GROUP;
        return String.format(Locale.ROOT, "COMPARE kafka_zipf_%1$dc_2ms_share_over_group=%2$.2f"
                        + " kafka_uniform_%1$dc_2ms_share_over_group=%3$.2f kafka_scaleout_1to%4$d_gain_share_over_group=%5$.2f"
                        + " kafka_stuck_%4$dc_unrelated_p99_group_over_share=%6$.1f kafka_scaleout_1to%4$d_gain_share=%7$.2f"
                        + " kafka_scaleout_1to%4$d_gain_group=%8$.2f kafka_zipf_msgs_per_round_trip_share=%9$.1f"
                        + " kafka_zipf_msgs_per_round_trip_group=%10$.1f kafka_zipf_cpu_us_per_msg_share=%11$.1f"
                        + " kafka_zipf_cpu_us_per_msg_group=%12$.1f diverged_kafka_share=%13$d diverged_kafka_group=%14$d",
                c, shareOverGroup(zipf, perSecond), shareOverGroup(uniform, perSecond), to,
                gain(KafkaContestant.SHARE_GROUP, to) / gain(KafkaContestant.CONSUMER_GROUP, to),
                1 / shareOverGroup(stuck, r -> r.figures().unrelated().p99()),
                gain(share, to), gain(group, to),
                of(zipf.apply(share), perRoundTrip), of(zipf.apply(group), perRoundTrip),
                of(zipf.apply(share), cpu), of(zipf.apply(group), cpu),
                diverged(share), diverged(group));
    }

    /** The {@code COMPARE} line of several runs: each figure's median, the diverged counts summed. */
    public static String medianLine(List<KafkaReport> runs) {
        return CompareReport.medianOf(runs.stream().map(KafkaReport::compareLine).toList());
    }

    /** The tables, in Markdown. */
    public String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("### Kafka: throughput (").append(plan.messages()).append(" records published at once and drained, ")
                .append(plan.partitions()).append(" partitions, ").append(plan.consumers()).append(" consumers, 2 ms)\n\n")
                .append("| keys | consumers | contestant | msg/s | share group is | messages per round trip | consumer CPU per message (µs) | embedded MongoDB CPU per message (µs) | latency p50 / p99 (ms) | longest stall of a waiting key (ms) | out of seq order | diverged |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (KafkaTrialResult result : results) {
            KafkaTrial t = result.trial();
            if (t.fault() != Fault.NONE) {
                continue;
            }
            TrialResult r = result.figures();
            double share = drain(KafkaContestant.SHARE_GROUP, t.workload().keys().name(), t.consumers())
                    .map(s -> s.figures().perSecond()).orElse(Double.NaN);
            md.append(String.format(Locale.ROOT, "| %s | %d | %s | %.0f | %s | %.1f | %.1f | %.1f | %.0f / %.0f | %.0f | %d | %d |%n",
                    t.workload().describe(), t.consumers(), t.contestant().label, r.perSecond(),
                    t.contestant() == KafkaContestant.SHARE_GROUP ? "-" : String.format(Locale.ROOT, "%.2fx", share / r.perSecond()),
                    r.perRoundTrip(), result.cpuPerMessage(), r.serverCpu().micros(), r.all().p50(), r.all().p99(), r.longestStall(), r.outOfOrder(),
                    r.diverged()));
        }
        md.append(String.format(Locale.ROOT, "%nScale-out (Zipf keys, 1 to %d consumers on %d partitions): the share group"
                        + " gained %.2fx, the consumer group %.2fx (its members past the partitions stand idle).%n",
                2 * plan.partitions(), plan.partitions(), gain(KafkaContestant.SHARE_GROUP, 2 * plan.partitions()),
                gain(KafkaContestant.CONSUMER_GROUP, 2 * plan.partitions())));
        md.append("\n### Kafka: a handler stuck (Zipf keys, 2 ms, ").append(plan.partitions()).append(" partitions, ")
                .append(2 * plan.partitions()).append(" consumers, a steady ").append(plan.rate()).append(" msg/s, the handler stuck ")
                .append(plan.stall().toSeconds()).append(" s)\n\n")
                .append("| contestant | msg/s | hit by the fault: p50 / p99 / max (ms) | every other message: p50 / p99 / max (ms) | others over 1 s | longest stall (ms) | out of seq order | diverged |\n")
                .append("|---|---|---|---|---|---|---|---|\n");
        for (KafkaTrialResult result : results) {
            KafkaTrial t = result.trial();
            if (t.fault() == Fault.NONE) {
                continue;
            }
            TrialResult r = result.figures();
            md.append(String.format(Locale.ROOT, "| %s | %.0f | %s | %s | %d of %d | %.0f | %d | %d |%n",
                    t.contestant().label, r.perSecond(), CompareReport.latency(r.related()), CompareReport.latency(r.unrelated()),
                    r.unrelated().overOneSecond(), r.unrelated().count(), r.longestStall(), r.outOfOrder(), r.diverged()));
        }
        return md.toString();
    }
}
