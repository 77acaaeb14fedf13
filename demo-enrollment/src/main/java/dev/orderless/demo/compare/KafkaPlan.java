package dev.orderless.demo.compare;

import dev.orderless.testing.kafka.KafkaSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Which Kafka trials a comparison runs: each contestant drains a backlog of Zipf and of uniform keys with as many
 * consumers as the topic has partitions, takes steady traffic with twice as many consumers while one handler is
 * stuck, and drains Zipf keys with 1 consumer and with twice the partitions (scale-out). All at 2 ms per MongoDB
 * round trip.
 *
 * @param consumers  consumer processes in the throughput trials (the stuck and scale-out trials: twice as many)
 * @param partitions the topic's partitions in every trial
 * @param messages   records per throughput trial (published first, then drained)
 * @param steady     records of the stuck trial, published at {@code rate}
 * @param rate       records/s of the stuck trial: below every contestant's capacity, so latency shows the fault
 * @param stall      how long the stuck handler is stuck
 * @param scaleOut   records of each scale-out drain (1 consumer; twice as many as partitions)
 */
public record KafkaPlan(String name, int consumers, int partitions, int messages, int steady, int rate, Duration stall,
                        int scaleOut, List<KafkaTrial> throughput, List<KafkaTrial> faults) {
    /**
     * The embedded broker a comparison starts where none is named: Kafka's own 30 s record lock, not the test
     * support's 2 s, after which a record held by a stuck handler went to another member (a 5 s stall then hit its
     * record for 2 s only, and a busy machine's poll could outlive its lock).
     */
    public static final KafkaSettings EMBEDDED_BROKER = KafkaSettings.ofDefaults().withRecordLockDuration(Duration.ofSeconds(30));

    /** The plan's figures checked; the trials follow from them. */
    public KafkaPlan {
        if (consumers < 1 || partitions < 1 || messages < 1 || steady < 1 || rate < 1 || scaleOut < 1) {
            throw new IllegalArgumentException("consumers, partitions, messages, steady, rate and scaleOut must be at"
                    + " least 1, were " + consumers + ", " + partitions + ", " + messages + ", " + steady + ", " + rate
                    + ", " + scaleOut);
        }
        throughput = List.copyOf(throughput);
        faults = List.copyOf(faults);
    }

    /** The quick plan (CI's, the demo's {@code compare --broker kafka --quick}): about a minute and a half. */
    public static KafkaPlan quick() {
        return quick(2000);
    }

    /** The quick plan with {@code messages} records per throughput trial. */
    public static KafkaPlan quick(int messages) {
        return of("quick", 4, messages, 2000, 200, Duration.ofSeconds(5), 3000);
    }

    /** The full plan: more records, a stall of 20 s at 250 records/s, as the RabbitMQ full plan. */
    public static KafkaPlan full() {
        return of("full", 4, 6000, 12_500, 250, Duration.ofSeconds(20), 6000);
    }

    private static KafkaPlan of(String name, int partitions, int messages, int steady, int rate, Duration stall,
                                int scaleOut) {
        List<KafkaTrial> throughput = new ArrayList<>();
        for (CompareWorkload workload : List.of(ComparePlan.ZIPF, ComparePlan.UNIFORM)) {
            for (KafkaContestant contestant : KafkaContestant.values()) {
                throughput.add(new KafkaTrial(contestant, sized(workload, messages), Fault.NONE, partitions, partitions,
                        ComparePlan.TWO_MS));
            }
        }
        List<KafkaTrial> faults = new ArrayList<>();
        // stuck: twice as many consumers as partitions. A share group's assignor gives each of as many members as
        // partitions a partition of its own, and only its member fetches it: with 4 on 4, a stuck member stalls its
        // partition as a consumer group's does. With 8, two members fetch each partition; a consumer group's other
        // four stand idle.
        for (KafkaContestant contestant : KafkaContestant.values()) {
            faults.add(new KafkaTrial(contestant, sized(ComparePlan.ZIPF, steady), Fault.STUCK, 2 * partitions, partitions,
                    ComparePlan.TWO_MS));
        }
        // scale-out: the same drain with 1 consumer and with twice as many as partitions, each timed once all are at
        // work. Joining a running drain measured the joins (a consumer group's took longer than its drain here)
        for (int consumers : List.of(1, 2 * partitions)) {
            for (KafkaContestant contestant : KafkaContestant.values()) {
                throughput.add(new KafkaTrial(contestant, sized(ComparePlan.ZIPF, scaleOut), Fault.NONE, consumers,
                        partitions, ComparePlan.TWO_MS));
            }
        }
        return new KafkaPlan(name, partitions, partitions, messages, steady, rate, stall, scaleOut, throughput, faults);
    }

    private static CompareWorkload sized(CompareWorkload workload, int messages) {
        return new CompareWorkload(workload.keys(), messages, workload.seed());
    }
}
