/**
 * A real Kafka broker for tests: KRaft, share groups on, on free ports, in the JVM or as a process that can be killed.
 *
 * <p>What it guarantees: {@link dev.orderless.testing.kafka.EmbeddedKafka} and
 * {@link dev.orderless.testing.kafka.KafkaProcess} run Kafka 4.2's own broker and controller (no mock, no container),
 * one node, on ports of 127.0.0.1 chosen free at start and kept across restarts, with logs in a temporary directory
 * deleted on close; a restart (clean, or after a SIGKILL of the process) keeps topics, records and share-group state.
 * Their share groups run with {@link dev.orderless.testing.kafka.KafkaSettings}' short timeouts, whose javadoc says
 * what a consumer can rely on (lock timeouts, the delivery count limit past which a record is archived).
 * {@link dev.orderless.testing.kafka.KafkaBrokers#fromEnvironment()} and
 * {@link dev.orderless.testing.kafka.KafkaExtension} use the broker {@code KAFKA_BOOTSTRAP} names instead, when set,
 * and never stop it. A broker that does not start fails in one line saying what to check.
 *
 * <p>Kafka logs through SLF4J, verbosely at INFO: set the loggers {@code kafka} and {@code org.apache.kafka} to WARN
 * in the tests' logging configuration (see {@link dev.orderless.testing.kafka.EmbeddedKafka}). Log4j's API, which
 * Kafka's broker asks for at start-up, is routed to SLF4J by {@code log4j-to-slf4j}.
 */
package dev.orderless.testing.kafka;
