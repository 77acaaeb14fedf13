/**
 * What every orderless consumer shares, whatever its broker: {@link dev.orderless.consume.ConsumerBuilder}, the
 * settings each broker's builder takes the same way. The guarantees live in the apply logic under it (not API:
 * {@code dev.orderless.consume.internal}): a message is accepted only after MongoDB acknowledged its write; poison
 * is dead-lettered with its reason, never dropped and never blocking the others; a transient MongoDB failure holds
 * the message and retries it after doubling pauses, for at most the consumer's max hold while MongoDB serves
 * others; stopping hands back what was not settled.
 */
package dev.orderless.consume;
