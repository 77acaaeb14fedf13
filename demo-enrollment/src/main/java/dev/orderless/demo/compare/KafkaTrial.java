package dev.orderless.demo.compare;

import java.time.Duration;

/**
 * One run of one Kafka contestant, on a topic of its own.
 *
 * @param contestant who applies the records
 * @param workload   the actions (record key: the student)
 * @param fault      none or a stuck handler (no kill; scale-out is a drain with 1 and one with more consumers)
 * @param consumers  consumer processes
 * @param partitions the topic's partitions
 * @param latency    added to every MongoDB round trip (half each way)
 */
record KafkaTrial(KafkaContestant contestant, CompareWorkload workload, Fault fault, int consumers, int partitions,
                  Duration latency) {
    KafkaTrial {
        if (fault != Fault.NONE && fault != Fault.STUCK) {
            throw new IllegalArgumentException("fault: the Kafka comparison runs none or stuck, not " + fault);
        }
        if (consumers < 1) {
            throw new IllegalArgumentException("consumers must be at least 1, was " + consumers);
        }
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be at least 1, was " + partitions);
        }
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
