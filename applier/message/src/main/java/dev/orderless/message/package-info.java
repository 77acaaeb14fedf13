/**
 * Messages: the canonical JSON envelope ({@link dev.orderless.message.Envelope}, one operation per message)
 * and typed decoding of an application's own message classes. Decoding refuses, with a one-line reason,
 * anything that is not exactly one valid operation.
 */
package dev.orderless.message;
