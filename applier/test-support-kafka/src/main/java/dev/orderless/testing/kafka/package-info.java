/**
 * A real Kafka broker for tests: KRaft, share groups on, on free ports, in the JVM or as a process that can be killed.
 */
package dev.orderless.testing.kafka;
