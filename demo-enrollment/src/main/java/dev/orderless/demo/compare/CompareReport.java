package dev.orderless.demo.compare;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Runs a {@link ComparePlan} in an {@link Arena} and writes what it measured: a line per trial as it ends,
 * then the tables (Markdown) and one {@code COMPARE} line of ratios measured side by side in this run.
 */
public final class CompareReport {
    private final ComparePlan plan;
    private final List<TrialResult> results = new ArrayList<>();
    private double ackOnly = Double.NaN;
    private double bulkOnly = Double.NaN;

    private CompareReport(ComparePlan plan) {
        this.plan = plan;
    }

    /** Runs every trial of {@code plan}, printing a line per trial to {@code progress}. */
    public static CompareReport run(Arena arena, ComparePlan plan, PrintStream progress) {
        CompareReport report = new CompareReport(plan);
        warmUp(arena, plan, progress);
        for (Trial trial : plan.throughput()) {
            report.add(arena.run(trial), progress);
        }
        if (!plan.throughput().isEmpty()) {
            Trial first = plan.throughput().get(0);
            report.ackOnly = arena.ackOnly(first.consumers(), Math.max(20_000, plan.messages()));
            report.bulkOnly = arena.bulkOnly(first.workload(), first.consumers(), first.latency());
            progress.printf(Locale.ROOT, "[compare] limits: ack-only consumers %.0f msg/s, unordered bulk upserts %.0f msg/s%n",
                    report.ackOnly, report.bulkOnly);
        }
        for (Trial trial : plan.faults()) {
            report.add(arena.run(trial), progress);
        }
        return report;
    }

    /**
     * One unrecorded drain by orderless and by batched partitions before anything is measured: the JIT
     * compiles the driver, the broker client and the embedded server on the way, and without this the first
     * trial of the plan (orderless's) would pay for it alone.
     */
    private static void warmUp(Arena arena, ComparePlan plan, PrintStream progress) {
        if (plan.throughput().isEmpty()) {
            return;
        }
        Trial first = plan.throughput().get(0);
        CompareWorkload workload = new CompareWorkload(first.workload().keys(), Math.min(3000, plan.messages()),
                first.workload().seed() + 1);
        progress.println("[compare] warming up (not measured)");
        for (Contestant contestant : List.of(Contestant.ORDERLESS, Contestant.PARTITIONED)) {
            arena.run(new Trial(contestant, true, workload, Fault.NONE, first.consumers(), first.latency()));
        }
    }

    private void add(TrialResult result, PrintStream progress) {
        results.add(result);
        Trial t = result.trial();
        progress.printf(Locale.ROOT, "[compare] %-32s %-10s %-19s %3s %4s ms: %7.0f msg/s, diverged %d, out of order %d%n",
                t.label(), t.workload().keys().name(), t.fault().label, t.consumers() + "c",
                t.latency().toMillis(), result.perSecond(), result.diverged(), result.outOfOrder());
    }

    public List<TrialResult> results() {
        return List.copyOf(results);
    }

    /** Students diverged from the oracle in every trial of {@code contestant}. */
    public int diverged(Contestant contestant) {
        return results.stream().filter(r -> r.trial().contestant() == contestant).mapToInt(TrialResult::diverged).sum();
    }

    private Optional<TrialResult> find(Predicate<Trial> which) {
        return results.stream().filter(r -> which.test(r.trial())).findFirst();
    }

    private Optional<TrialResult> throughput(Contestant contestant, boolean batched, String keys, Duration latency) {
        return find(t -> t.fault() == Fault.NONE && t.contestant() == contestant
                && (contestant == Contestant.ORDERLESS || t.batched() == batched)
                && t.workload().keys().name().equals(keys) && t.latency().equals(latency));
    }

    private Optional<TrialResult> faulted(Contestant contestant, boolean batched, Fault fault) {
        return find(t -> t.fault() == fault && t.contestant() == contestant
                && (contestant == Contestant.ORDERLESS || t.batched() == batched));
    }

    /** orderless's messages/s over {@code contestant}'s, Zipf keys, 2 ms. */
    private double speedup(Contestant contestant, boolean batched) {
        return ratio(throughput(Contestant.ORDERLESS, true, "zipf", ComparePlan.TWO_MS).map(TrialResult::perSecond),
                throughput(contestant, batched, "zipf", ComparePlan.TWO_MS).map(TrialResult::perSecond));
    }

    private static double ratio(Optional<Double> over, Optional<Double> under) {
        return over.isPresent() && under.isPresent() ? over.get() / under.get() : Double.NaN;
    }

    /**
     * Consumer CPU per message of every Zipf, 2 ms throughput trial, µs: {@code cpu_us_per_msg_<contestant>} (with
     * {@code _permsg} or {@code _batched} for the rivals), in the plan's order; beside it the embedded MongoDB's,
     * {@code server_cpu_us_per_msg_<contestant>}, where it runs in this JVM.
     */
    private String cpuFigures() {
        StringBuilder figures = new StringBuilder();
        for (TrialResult r : results) {
            Trial t = r.trial();
            if (t.fault() == Fault.NONE && t.workload().keys().name().equals("zipf") && t.latency().equals(ComparePlan.TWO_MS)) {
                figures.append(String.format(Locale.ROOT, " cpu_us_per_msg_%s=%.1f", cpuKey(t), r.consumerCpu().micros()));
                if (r.serverCpu().cpuNanos() > 0) {
                    figures.append(String.format(Locale.ROOT, " server_cpu_us_per_msg_%s=%.1f", cpuKey(t), r.serverCpu().micros()));
                }
            }
        }
        return figures.toString();
    }

    private static String cpuKey(Trial t) {
        String contestant = t.contestant().name().toLowerCase(Locale.ROOT);
        return t.contestant() == Contestant.ORDERLESS ? contestant : contestant + (t.batched() ? "_batched" : "_permsg");
    }

    /** The one line a script reads: ratios from this run, then each contestant's consumer CPU per message. */
    public String compareLine() {
        int c = plan.consumers();
        double stuck = ratio(faulted(Contestant.PARTITIONED, true, Fault.STUCK).map(r -> r.unrelated().p99()),
                faulted(Contestant.ORDERLESS, true, Fault.STUCK).map(r -> r.unrelated().p99()));
        double limit = Math.min(ackOnly, bulkOnly);
        return String.format(Locale.ROOT, "COMPARE zipf_%1$dc_2ms_vs_single_permsg=%2$.2f zipf_%1$dc_2ms_vs_partitioned_permsg=%3$.2f"
                        + " zipf_%1$dc_2ms_vs_partitioned_batched=%4$.2f stuck_unrelated_p99_partitioned_over_orderless=%5$.1f"
                        + " scaleout_1to4_gain_orderless=%6$.2f scaleout_1to4_gain_partitioned=%7$.2f orderless_of_limit=%8$.2f"
                        + " diverged_orderless=%9$d diverged_unguarded=%10$d zipf_msgs_per_round_trip=%11$.1f"
                        + " uniform_msgs_per_round_trip=%12$.1f",
                c, speedup(Contestant.SINGLE_ACTIVE, false), speedup(Contestant.PARTITIONED, false),
                speedup(Contestant.PARTITIONED, true), stuck,
                faulted(Contestant.ORDERLESS, true, Fault.SCALE_OUT).map(TrialResult::gain).orElse(Double.NaN),
                faulted(Contestant.PARTITIONED, true, Fault.SCALE_OUT)
                        .or(() -> faulted(Contestant.PARTITIONED, false, Fault.SCALE_OUT)).map(TrialResult::gain).orElse(Double.NaN),
                throughput(Contestant.ORDERLESS, true, "zipf", ComparePlan.TWO_MS).map(TrialResult::perSecond).orElse(Double.NaN) / limit,
                diverged(Contestant.ORDERLESS), diverged(Contestant.UNGUARDED),
                throughput(Contestant.ORDERLESS, true, "zipf", ComparePlan.TWO_MS).map(TrialResult::perRoundTrip)
                        .orElse(Double.NaN),
                throughput(Contestant.ORDERLESS, true, "uniform", ComparePlan.TWO_MS).map(TrialResult::perRoundTrip)
                        .orElse(Double.NaN)) + cpuFigures();
    }

    /** The tables, in Markdown. */
    public String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("### Throughput (").append(plan.messages()).append(" messages drained from a backlog)\n\n")
                .append("| keys | MongoDB latency | contestant | msg/s | orderless is | messages per round trip | consumer CPU µs/msg | embedded MongoDB CPU µs/msg | latency p50 / p99 (ms) | longest stall of a waiting key (ms) | out of seq order | diverged |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (TrialResult r : results) {
            Trial t = r.trial();
            if (t.fault() != Fault.NONE) {
                continue;
            }
            double orderless = throughput(Contestant.ORDERLESS, true, t.workload().keys().name(), t.latency())
                    .map(TrialResult::perSecond).orElse(Double.NaN);
            md.append(String.format(Locale.ROOT, "| %s | %d ms | %s | %.0f | %s | %.1f | %.0f | %s | %.0f / %.0f | %.0f | %d | %d |%n",
                    t.workload().describe(), t.latency().toMillis(), t.label(), r.perSecond(),
                    t.contestant() == Contestant.ORDERLESS ? "-" : String.format(Locale.ROOT, "%.2fx", orderless / r.perSecond()),
                    r.perRoundTrip(), r.consumerCpu().micros(), server(r), r.all().p50(), r.all().p99(), r.longestStall(), r.outOfOrder(), r.diverged()));
        }
        if (!Double.isNaN(ackOnly)) {
            md.append(String.format(Locale.ROOT, "%nLimits in the same run: consumers that only ack %.0f msg/s (the broker's);"
                    + " unordered bulk upserts of the same actions, no broker, %.0f msg/s (MongoDB's).%n", ackOnly, bulkOnly));
        }
        md.append("\n### Faults (Zipf keys, 2 ms; stuck and kill at a steady ").append(plan.rate()).append(" msg/s, the handler stuck ")
                .append(plan.stall().toSeconds()).append(" s; scale-out drains a backlog with 1, then 4 consumers)\n\n")
                .append("| fault | contestant | msg/s | scale-out gain | hit by the fault: p50 / p99 / max (ms) | every other message: p50 / p99 / max (ms) | others over 1 s | longest stall (ms) | out of seq order | diverged | consumer CPU µs/msg |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (TrialResult r : results) {
            Trial t = r.trial();
            if (t.fault() == Fault.NONE) {
                continue;
            }
            md.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %s | %s | %s | %d of %d | %.0f | %d | %d | %.0f |%n", t.fault().label,
                    t.label(), r.perSecond(), t.fault() != Fault.SCALE_OUT ? "-" : Double.isNaN(r.gain()) ? "drained before they joined"
                            : String.format(Locale.ROOT, "%.2fx", r.gain()),
                    latency(r.related()), latency(r.unrelated()), r.unrelated().overOneSecond(), r.unrelated().count(),
                    r.longestStall(), r.outOfOrder(), r.diverged(), r.consumerCpu().micros()));
        }
        if (results.stream().anyMatch(r -> r.trial().fault() == Fault.SCALE_OUT)) {
            md.append("\nPartitioned scale-out: the joiners register on every lane, but a single active consumer per lane"
                    + " gives them no work until the lanes are re-assigned (a new partition count and a restart), so its gain"
                    + " is about 1 by design; single active consumer likewise.\n");
        }
        return md.toString();
    }

    /**
     * Several runs of one plan summed up, since single runs on a shared machine vary by about a third: each
     * throughput trial's median messages/s, the median of its per-run "orderless is" ratios, its median messages
     * per round trip and the students diverged in all runs; then one {@code COMPARE} line whose every figure is the
     * median of that figure over the runs (NaN where any run has none).
     */
    public static String medians(List<CompareReport> runs) {
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("medians of no runs");
        }
        StringBuilder md = new StringBuilder();
        md.append("### Medians of ").append(runs.size()).append(" runs (throughput, ").append(runs.get(0).plan.messages())
                .append(" messages drained from a backlog)\n\n")
                .append("| keys | MongoDB latency | contestant | msg/s | orderless is | messages per round trip | consumer CPU µs/msg | diverged (all runs) |\n")
                .append("|---|---|---|---|---|---|---|---|\n");
        List<TrialResult> first = runs.get(0).results;
        for (int t = 0; t < first.size(); t++) {
            Trial trial = first.get(t).trial();
            if (trial.fault() != Fault.NONE) {
                continue;
            }
            List<Double> perSecond = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            List<Double> perRoundTrip = new ArrayList<>();
            List<Double> cpu = new ArrayList<>();
            int diverged = 0;
            for (CompareReport run : runs) {
                TrialResult r = run.results.get(t);
                perSecond.add(r.perSecond());
                perRoundTrip.add(r.perRoundTrip());
                cpu.add(r.consumerCpu().micros());
                diverged += r.diverged();
                ratios.add(run.throughput(Contestant.ORDERLESS, true, trial.workload().keys().name(), trial.latency())
                        .map(TrialResult::perSecond).orElse(Double.NaN) / r.perSecond());
            }
            md.append(String.format(Locale.ROOT, "| %s | %d ms | %s | %.0f | %s | %.1f | %.0f | %d |%n",
                    trial.workload().describe(), trial.latency().toMillis(), trial.label(), median(perSecond),
                    trial.contestant() == Contestant.ORDERLESS ? "-" : String.format(Locale.ROOT, "%.2fx", median(ratios)),
                    median(perRoundTrip), median(cpu), diverged));
        }
        return md.toString();
    }

    /** The {@code COMPARE} line of {@code runs}: each figure the median of that figure over the runs. */
    public static String medianLine(List<CompareReport> runs) {
        return medianOf(runs.stream().map(CompareReport::compareLine).toList());
    }

    /** {@code COMPARE} lines summed up: each figure's median, the diverged counts summed. */
    static String medianOf(List<String> lines) {
        java.util.Map<String, List<Double>> figures = new java.util.LinkedHashMap<>();
        for (String compareLine : lines) {
            for (String pair : compareLine.substring("COMPARE ".length()).split(" ")) {
                String[] kv = pair.split("=", 2);
                figures.computeIfAbsent(kv[0], k -> new ArrayList<>()).add(Double.parseDouble(kv[1]));
            }
        }
        StringBuilder line = new StringBuilder("COMPARE");
        figures.forEach((key, values) -> line.append(' ').append(key).append('=')
                .append(key.startsWith("diverged_") ? String.format(Locale.ROOT, "%.0f", values.stream()
                        .mapToDouble(Double::doubleValue).sum()) : String.format(Locale.ROOT, "%.2f", median(values))));
        return line.toString();
    }

    /** The median (the mean of the middle two for an even count); NaN if any value is NaN. */
    static double median(List<Double> values) {
        if (values.isEmpty() || values.stream().anyMatch(v -> v.isNaN())) {
            return Double.NaN;
        }
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    /** The embedded MongoDB's CPU per message; "-" where none was measured (a MongoDB outside this JVM). */
    private static String server(TrialResult r) {
        return r.serverCpu().cpuNanos() == 0 ? "-" : String.format(Locale.ROOT, "%.0f", r.serverCpu().micros());
    }

    static String latency(TrialResult.Latency l) {
        return l.count() == 0 ? "-" : String.format(Locale.ROOT, "%.0f / %.0f / %.0f", l.p50(), l.p99(), l.max());
    }
}
