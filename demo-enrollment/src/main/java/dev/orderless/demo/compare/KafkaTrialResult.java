package dev.orderless.demo.compare;

/**
 * What one Kafka trial measured.
 *
 * @param trial       what ran
 * @param figures     messages/s, scale-out gain, latencies, stalls, divergence and messages per round trip,
 *                    measured as for RabbitMQ ({@link TrialResult}; its trial is {@link KafkaTrial#analogue()})
 * @param cpuPerMessage the consumer processes' CPU time (every thread each started: poll loops, Kafka clients'
 *                    network threads, MongoDB drivers; not the broker's, the MongoDB server's or the proxies') over
 *                    the records applied, from the moment every consumer was in the group, µs
 */
public record KafkaTrialResult(KafkaTrial trial, TrialResult figures, double cpuPerMessage) {
}
