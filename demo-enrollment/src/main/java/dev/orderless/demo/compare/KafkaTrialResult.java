package dev.orderless.demo.compare;

/**
 * What one Kafka trial measured.
 *
 * @param trial   what ran
 * @param figures messages/s, scale-out gain, latencies, stalls, divergence, messages per round trip and consumer CPU
 *                per message, measured as for RabbitMQ ({@link TrialResult}; its trial is {@link KafkaTrial#analogue()}):
 *                the consumer processes' threads are their poll loops, their Kafka clients' and their MongoDB
 *                drivers'; not the broker's, the MongoDB server's or the proxies'
 */
public record KafkaTrialResult(KafkaTrial trial, TrialResult figures) {
    /** Consumer CPU per record, µs (NaN if none was measured). */
    double cpuPerMessage() {
        return figures.consumerCpu().micros();
    }
}
