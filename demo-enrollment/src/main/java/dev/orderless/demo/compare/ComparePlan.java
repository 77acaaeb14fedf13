package dev.orderless.demo.compare;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Which trials a comparison runs: the full one (the benchmark: every contestant in both settings, two
 * workloads, two latencies, three faults) or the quick one (the demo's {@code compare --quick}: the Zipf
 * workload at 2 ms, the defaults teams run, one fault, in about a minute).
 *
 * @param consumers   consumer processes in every trial but scale-out (1 -> 4)
 * @param messages    messages per throughput trial (published first, then drained)
 * @param steady      messages per fault trial, published at {@code rate}
 * @param rate        messages/s of a fault trial: below every contestant's capacity, so latency shows the fault
 * @param stall       how long a stuck handler is stuck
 * @param throughput  the throughput trials
 * @param faults      the fault trials (stuck, kill) and scale-out trials
 */
public record ComparePlan(String name, int consumers, int messages, int steady, int rate, Duration stall,
                          List<Trial> throughput, List<Trial> faults) {
    static final CompareWorkload ZIPF = new CompareWorkload(Keys.zipf(100_000, 1.1), 0, 7);
    static final CompareWorkload UNIFORM = new CompareWorkload(Keys.uniform(10_000), 0, 7);
    static final Duration TWO_MS = Duration.ofMillis(2);

    /** The benchmark's plan: about ten minutes on 2 cores. */
    public static ComparePlan full() {
        int consumers = 8;
        int messages = 6000;
        List<Trial> throughput = new ArrayList<>();
        for (CompareWorkload workload : List.of(ZIPF, UNIFORM)) {
            for (Duration latency : List.of(TWO_MS, Duration.ZERO)) {
                throughput.addAll(everyContestant(sized(workload, messages), Fault.NONE, consumers, latency));
            }
        }
        // stuck: 50 s at 250 msg/s, so that the messages a stuck orderless consumer's prefetch holds (100) are
        // 0.8 % of the run and the p99 of the others shows whether the fault reaches beyond them; kill: 20 s
        int steady = 12_500;
        List<Trial> faults = new ArrayList<>(usual(sized(ZIPF, steady), Fault.STUCK, consumers));
        faults.addAll(usual(sized(ZIPF, 5000), Fault.KILL, consumers));
        faults.addAll(usual(sized(ZIPF, 6000), Fault.SCALE_OUT, 4));
        return new ComparePlan("full", consumers, messages, steady, 250, Duration.ofSeconds(20), throughput, faults);
    }

    /** The demo's quick plan: about a minute. */
    public static ComparePlan quick() {
        return quick(4, 1500, false);
    }

    /**
     * The quick plan with {@code consumers} consumers and {@code messages} per throughput trial, over
     * uniform keys (10k students) instead of Zipf-skewed ones if {@code uniform}.
     */
    public static ComparePlan quick(int consumers, int messages, boolean uniform) {
        List<Trial> throughput = usual(sized(uniform ? UNIFORM : ZIPF, messages), Fault.NONE, consumers);
        List<Trial> faults = new ArrayList<>();
        for (Contestant contestant : List.of(Contestant.ORDERLESS, Contestant.PARTITIONED)) {
            faults.add(new Trial(contestant, true, sized(ZIPF, 2000), Fault.STUCK, consumers, TWO_MS));
        }
        return new ComparePlan("quick", consumers, messages, 2000, 200, Duration.ofSeconds(5), throughput, faults);
    }

    private static CompareWorkload sized(CompareWorkload workload, int messages) {
        return new CompareWorkload(workload.keys(), messages, workload.seed());
    }

    /** orderless, and every other contestant one message at a time and batched. */
    private static List<Trial> everyContestant(CompareWorkload workload, Fault fault, int consumers, Duration latency) {
        List<Trial> trials = new ArrayList<>();
        trials.add(new Trial(Contestant.ORDERLESS, true, workload, fault, consumers, latency));
        for (Contestant contestant : List.of(Contestant.SINGLE_ACTIVE, Contestant.PARTITIONED, Contestant.UNGUARDED)) {
            trials.add(new Trial(contestant, false, workload, fault, consumers, latency));
            trials.add(new Trial(contestant, true, workload, fault, consumers, latency));
        }
        return trials;
    }

    /** The settings teams run (one message at a time), and the partitioned contestant batched too. */
    private static List<Trial> usual(CompareWorkload workload, Fault fault, int consumers) {
        return List.of(new Trial(Contestant.ORDERLESS, true, workload, fault, consumers, TWO_MS),
                new Trial(Contestant.SINGLE_ACTIVE, false, workload, fault, consumers, TWO_MS),
                new Trial(Contestant.PARTITIONED, false, workload, fault, consumers, TWO_MS),
                new Trial(Contestant.PARTITIONED, true, workload, fault, consumers, TWO_MS),
                new Trial(Contestant.UNGUARDED, false, workload, fault, consumers, TWO_MS));
    }
}
