/**
 * Spring Boot auto-configuration of the Kafka share-group consumer ({@code orderless.kafka.*}), where orderless-kafka
 * and Spring Boot's Kafka support are on the class path and {@code orderless.kafka.topic} is set: it connects as
 * {@code spring.kafka.*} says, applies with the application's {@code GuardedApplier}, starts and stops with the
 * context, and its health is DOWN, naming the topic, whenever it does not consume.
 */
package dev.orderless.kafka.boot;
