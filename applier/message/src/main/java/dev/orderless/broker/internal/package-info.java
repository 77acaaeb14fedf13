/**
 * What the producer and the consumer artifacts need of each other's broker handling but users must not touch:
 * whether a message's AMQP properties can be sent at all ({@link dev.orderless.broker.internal.AmqpEncoding}).
 */
package dev.orderless.broker.internal;
