/**
 * Not API: the share consumer's worker thread, its record deliveries and the dead-letter writer. It may change in any
 * release; do not use it from an application.
 */
package dev.orderless.kafka.internal;
