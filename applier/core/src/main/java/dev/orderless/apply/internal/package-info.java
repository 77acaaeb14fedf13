/**
 * What the apply package shares with the rest of orderless (the version history's rebuild) but users must not touch:
 * how a counter's document keeps the increments it counted ({@link dev.orderless.apply.internal.CounterBook}), and
 * how a rebuild writes a counter's folded and coalesced increments back exactly
 * ({@link dev.orderless.apply.internal.CounterRestore}). No compatibility promise.
 */
package dev.orderless.apply.internal;
