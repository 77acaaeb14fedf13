package dev.orderless.demo.compare;

import dev.orderless.apply.Operation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one trial measured.
 *
 * @param trial        what ran
 * @param perSecond    messages applied per second, from the moment every consumer was up to the last message
 *                     applied (steady traffic: from the first publish)
 * @param gain         scale-out: messages/s after the three joined over messages/s before (NaN if less than a
 *                     tenth of the backlog was left when they were up); 1 otherwise
 * @param all          publish-to-applied latency of every message (in a drain: mostly the wait in the backlog)
 * @param related      the same for the messages the fault hit: the stuck message's student; the messages the
 *                     killed consumer held, delivered again
 * @param unrelated    the same for every other message
 * @param longestStall the longest time any student made no progress while a message for it waited, ms,
 *                     counted from the moment every consumer was up
 * @param diverged     students whose final state differs from the sequential oracle
 * @param outOfOrder   messages handled after a higher seq of the same student was (for orderless: arrivals
 *                     the guard put right; for plain upserts: writes applied out of order)
 * @param perRoundTrip messages per MongoDB command the consumers sent: how many messages one round trip
 *                     carries, the bound of one lane (messages/s at most perRoundTrip / round-trip time)
 * @param consumerCpu  the consumer processes' CPU time over the messages applied, from the moment every consumer
 *                     was up to the last message applied ({@link CpuMeter}: every thread each process started,
 *                     not the MongoDB server's, the broker's or the proxies')
 * @param serverCpu    the embedded MongoDB server's CPU time (its worker threads, in this JVM) over the same
 *                     messages; nothing measured of a MongoDB elsewhere
 */
public record TrialResult(Trial trial, double perSecond, double gain, Latency all, Latency related, Latency unrelated,
                          double longestStall, int diverged, long outOfOrder, double perRoundTrip,
                          CpuPerMessage consumerCpu, CpuPerMessage serverCpu) {

    /** When a trial's phases began, and how many messages were applied by then. */
    record Marks(long started, int appliedAtStart, long faultAt, int appliedAtFault, long joinedAt, int appliedAtJoined) {
    }

    /**
     * Publish-to-applied latency of a group of messages, in ms (NaN for an empty group), and how many of
     * them took over a second: a percentile alone hides how many messages a fault held.
     */
    public record Latency(int count, double p50, double p99, double max, int overOneSecond) {
        static Latency of(List<Long> nanos) {
            if (nanos.isEmpty()) {
                return new Latency(0, Double.NaN, Double.NaN, Double.NaN, 0);
            }
            long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
            int slow = (int) java.util.Arrays.stream(sorted).filter(n -> n > 1_000_000_000L).count();
            return new Latency(sorted.length, at(sorted, 0.50), at(sorted, 0.99), sorted[sorted.length - 1] / 1e6, slow);
        }

        private static double at(long[] sorted, double quantile) {
            return sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)] / 1e6;
        }
    }

    static TrialResult of(Trial trial, List<Operation> ops, Tally tally, Marks marks, int diverged, CpuPerMessage consumerCpu,
                          CpuPerMessage serverCpu) {
        int n = ops.size();
        long end = 0;
        Set<String> stuckKeys = tally.faultyKeys();
        List<Long> all = new ArrayList<>();
        List<Long> related = new ArrayList<>();
        List<Long> unrelated = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            end = Math.max(end, tally.appliedAt(i));
            long latency = tally.appliedAt(i) - tally.publishedAt(i);
            all.add(latency);
            boolean hit = stuckKeys.contains(ops.get(i).entity()) || tally.wasRedelivered(i);
            (hit ? related : unrelated).add(latency);
        }
        // from the moment every consumer was up: a contestant's start-up (connections, declarations) is not its pace
        double perSecond = (n - marks.appliedAtStart()) / ((end - marks.started()) / 1e9);
        double gain = 1;
        if (marks.faultAt() > 0) {
            double before = (marks.appliedAtFault() - marks.appliedAtStart()) / ((marks.faultAt() - marks.started()) / 1e9);
            double after = (n - marks.appliedAtJoined()) / ((end - marks.joinedAt()) / 1e9);
            // a backlog drained before the joiners were up measures their start-up, not their pace
            gain = n - marks.appliedAtJoined() < n / 10 ? Double.NaN : after / before;
        }
        return new TrialResult(trial, perSecond, gain, Latency.of(all), Latency.of(related), Latency.of(unrelated),
                longestStall(ops, tally, marks.started()) / 1e6, diverged, tally.outOfOrder(),
                n / (double) Math.max(1, tally.roundTrips().get()), consumerCpu, serverCpu);
    }

    /**
     * For each student: walk its publishes and applies in time order; while at least one of its messages
     * waits, the time since it last made progress (a message applied, or the first message waiting) grows;
     * the longest such stretch over every student.
     */
    static long longestStall(List<Operation> ops, Tally tally, long from) {
        Map<String, List<long[]>> events = new HashMap<>();   // {time, +1 publish / -1 apply}
        for (int i = 0; i < ops.size(); i++) {
            List<long[]> mine = events.computeIfAbsent(ops.get(i).entity(), k -> new ArrayList<>());
            mine.add(new long[] {Math.max(from, tally.publishedAt(i)), 1});
            mine.add(new long[] {Math.max(from, tally.appliedAt(i)), -1});   // applied while consumers started: at from
        }
        long longest = 0;
        for (List<long[]> mine : events.values()) {
            long[][] sorted = mine.toArray(new long[0][]);
            Arrays.sort(sorted, (a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(b[1], a[1]));
            int waiting = 0;
            long since = 0;
            for (long[] event : sorted) {
                if (event[1] > 0) {
                    if (waiting++ == 0) {
                        since = event[0];
                    }
                } else {
                    longest = Math.max(longest, event[0] - since);
                    waiting--;
                    since = event[0];
                }
            }
        }
        return longest;
    }
}
