/**
 * Not API: what orderless's own RabbitMQ pieces share: the apply logic of a consumer whatever its protocol
 * ({@link dev.orderless.amqp.internal.ApplyingHandler} over a {@link dev.orderless.amqp.internal.Delivery},
 * used by the AMQP 0-9-1 consumer and the AMQP 1.0 one), its metrics and observations, and what the dead
 * letters, the publisher and the outbox relay share. It may change in any release; do not use it from an
 * application.
 */
package dev.orderless.amqp.internal;
