/**
 * orderless over AMQP 1.0, for RabbitMQ 4 and later, on RabbitMQ's AMQP 1.0 client.
 * {@link dev.orderless.amqp10.Amqp10Consumer}: the same guarantees and outcomes as the AMQP 0-9-1
 * {@link dev.orderless.amqp.OperationConsumer} (its apply logic is shared), except that the broker dead-letters a
 * poison message itself when the consumer settles it so, with the reason as {@code x-opt-orderless-*}
 * annotations: exactly once, whenever the consumer dies. {@link dev.orderless.amqp10.Amqp10Publisher}: an
 * {@link dev.orderless.publish.OperationPublisher} that waits for the broker's {@code accepted}. The queues are
 * declared, and the dead letters listed, replayed and parked, with the AMQP 0-9-1 tools
 * ({@link dev.orderless.broker.QueueTopology} of {@code orderless-message}, {@link dev.orderless.amqp.DeadLetterQueue}
 * of {@code orderless-rabbit}),
 * which understand the letters of both.
 */
package dev.orderless.amqp10;
