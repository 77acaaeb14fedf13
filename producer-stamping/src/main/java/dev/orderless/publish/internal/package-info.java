/**
 * What orderless's publishers share and users must not touch (it may change in any release): the message to send
 * ({@link dev.orderless.publish.internal.Outgoing}) and the window-by-window loop that reports what a failed window
 * left unsent ({@link dev.orderless.publish.internal.Windows}). The AMQP 0-9-1 {@code ConfirmingPublisher} and the
 * AMQP 1.0 publisher both send through them.
 */
package dev.orderless.publish.internal;
