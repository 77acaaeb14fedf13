/**
 * What the producer and the consumer artifacts need of each other's broker handling but users must not touch:
 * whether a message's AMQP properties can be sent at all ({@link dev.orderless.broker.internal.AmqpEncoding}), and
 * whether a broker refused this client for a reason of configuration or did not answer, said in one line that
 * names where and what to check ({@link dev.orderless.broker.internal.BrokerRefusals}).
 */
package dev.orderless.broker.internal;
