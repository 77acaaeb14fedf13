/**
 * orderless: apply operations to MongoDB in any order and converge to the state of applying them one at a
 * time in increasing seq order, each once. This package holds the one exception root,
 * {@link dev.orderless.OrderlessException}, and its subclasses, one per way a caller acts:
 * {@link dev.orderless.CannotApplyException} (dead-letter: retrying cannot help; {@link
 * dev.orderless.InvalidInputException} and {@link dev.orderless.UnknownFieldException} for bad input),
 * {@link dev.orderless.TransientException} (retry later; applying again is safe) and
 * {@link dev.orderless.InvalidConfigurationException} (fix the set-up; the message names what to change);
 * and {@link dev.orderless.Backoff}, the one back-off every retry loop of orderless uses.
 */
package dev.orderless;
