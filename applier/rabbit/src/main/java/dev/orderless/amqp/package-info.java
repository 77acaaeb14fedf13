/**
 * The RabbitMQ integration. {@link dev.orderless.amqp.OperationConsumer}: competing consumers that apply
 * each message with the core's guarded apply and ack it only after MongoDB acknowledged the write. Every
 * message ends applied, stale or dead-lettered with its reason; an outage holds messages (never acks or
 * dead-letters them) and retries with back-off; bad input never blocks the queue.
 * {@link dev.orderless.amqp.DeadLetterQueue} lists, replays, parks and purges dead letters. What a producer shares
 * with it is in {@code orderless-message}: {@link dev.orderless.broker.QueueTopology} declares the queues,
 * {@link dev.orderless.broker.BrokerBlocking} watches for a broker that blocks publishers.
 *
 * <p>Parked, throughout orderless, means set aside, out of the flow, until an operator retries or purges
 * it: a dead letter moved to {@code <dead-letter queue>.parked} ({@link dev.orderless.amqp.DeadLetterQueue#park}),
 * or an outbox entry its relay cannot publish. Held means kept unacked in memory until a condition clears by
 * itself, with no operator: a message retried through a MongoDB outage ({@code orderless.consume.retrying}),
 * or a dead letter waiting for the broker to stop blocking publishers ({@code orderless.consume.dead_letters.held}).
 */
package dev.orderless.amqp;
