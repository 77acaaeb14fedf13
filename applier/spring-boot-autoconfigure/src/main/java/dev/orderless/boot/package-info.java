/**
 * Spring Boot 4.1 auto-configuration of the consumer side: the applier, the consumer as a lifecycle bean
 * with health, a feeder per {@link dev.orderless.boot.OrderlessView} bean, scheduled compaction and the
 * dead-letter endpoint, from {@code orderless.*} properties. A misspelt, missing or out-of-range property
 * fails the start, naming it.
 */
package dev.orderless.boot;
