package dev.orderless.demo.compare;

import java.time.Duration;

/**
 * One run of one Kafka contestant, on a topic of its own.
 *
 * @param contestant who applies the records
 * @param workload   the actions (record key: the student)
 * @param fault      none, a stuck handler, or scale-out (1 consumer, then {@code consumers} in all); no kill
 * @param consumers  consumer processes (scale-out: how many there are once the others joined)
 * @param partitions the topic's partitions
 * @param latency    added to every MongoDB round trip (half each way)
 */
record KafkaTrial(KafkaContestant contestant, CompareWorkload workload, Fault fault, int consumers, int partitions,
                  Duration latency) {
    KafkaTrial {
        if (fault == Fault.KILL) {
            throw new IllegalArgumentException("fault: the Kafka comparison has no kill trial");
        }
        if (consumers < 1) {
            throw new IllegalArgumentException("consumers must be at least 1, was " + consumers);
        }
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be at least 1, was " + partitions);
        }
    }

    String faultLabel() {
        return fault == Fault.SCALE_OUT ? "scale-out 1 -> " + consumers : fault.label;
    }

    /**
     * The RabbitMQ trial this one corresponds to (a share group with orderless: orderless; a consumer group:
     * batched partitions), which {@link TrialResult} is measured by.
     */
    Trial analogue() {
        return new Trial(contestant == KafkaContestant.SHARE_GROUP ? Contestant.ORDERLESS : Contestant.PARTITIONED,
                true, workload, fault, consumers, latency);
    }
}
