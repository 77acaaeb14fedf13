/**
 * Not API: what orderless's consumers share, whatever their broker: the apply logic of a consumer
 * ({@link dev.orderless.consume.internal.ApplyingHandler} over a {@link dev.orderless.consume.internal.Delivery},
 * used by the AMQP 0-9-1 consumer, the AMQP 1.0 one and the Kafka share consumer), its metrics and observations, and what the dead
 * letters, the publisher and the outbox relay share. It may change in any release; do not use it from an
 * application.
 */
package dev.orderless.consume.internal;
