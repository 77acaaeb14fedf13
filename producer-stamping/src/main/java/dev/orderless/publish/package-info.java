/**
 * Publishing with confirms: {@link dev.orderless.publish.ConfirmingPublisher} returns only once the broker
 * confirmed and routed every message, re-sends what it did not take, and reports what it never took; a
 * message the client cannot even encode is refused before it touches the channel.
 * {@link dev.orderless.publish.StampingPublisher} stamps, then publishes.
 */
package dev.orderless.publish;
