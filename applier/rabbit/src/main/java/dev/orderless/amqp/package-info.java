/**
 * The RabbitMQ integration. {@link dev.orderless.amqp.OperationConsumer}: competing consumers that apply
 * each message with the core's guarded apply and ack it only after MongoDB acknowledged the write. Every
 * message ends applied, stale or dead-lettered with its reason; an outage holds messages (never acks or
 * dead-letters them) and retries with back-off; bad input never blocks the queue.
 * {@link dev.orderless.amqp.QueueTopology} declares the queues, {@link dev.orderless.amqp.DeadLetterQueue}
 * lists, replays, parks and purges dead letters, {@link dev.orderless.amqp.BrokerBlocking} watches for a
 * broker that blocks publishers.
 */
package dev.orderless.amqp;
