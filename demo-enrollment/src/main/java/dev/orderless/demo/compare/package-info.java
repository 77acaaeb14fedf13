/**
 * orderless head to head with the ways teams keep order without it, on the same RabbitMQ, the same
 * MongoDB and the same actions: RabbitMQ's single active consumer, hash partitions with a single active
 * consumer each, and competing consumers with plain upserts (no guard). Each contestant runs in its own
 * trial: workload, fault, consumers and MongoDB latency fixed; messages/s, publish-to-applied latency (split
 * into the keys on the faulty lane and all the others), the longest stall of a waiting key, writes applied
 * out of seq order and entities that diverged from the sequential oracle measured, and the CPU each
 * contestant's consumers spent per message ({@link dev.orderless.demo.compare.CpuMeter}: a contestant's
 * consumers are started {@code within} their {@code ConsumerProcess}'s thread group, and nothing else of them
 * needs to know it).
 *
 * <p>On Kafka ({@link dev.orderless.demo.compare.KafkaArena}, {@link dev.orderless.demo.compare.KafkaPlan},
 * {@link dev.orderless.demo.compare.KafkaReport}): a share group with orderless's share-group consumer against a
 * consumer group with per-partition order (one KafkaConsumer per partition, an ordered bulk write of plain upserts
 * per poll, the offsets committed after it), the same records on the same partitions, measured the same way.
 *
 * <p>Used by the demo's {@code compare} command and by the {@code CompareBenchmark}; not an API.
 */
package dev.orderless.demo.compare;
