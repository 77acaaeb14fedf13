/**
 * The outbox: {@link dev.orderless.outbox.Outbox#record} stores a stamped action in MongoDB (majority write
 * concern) without touching the broker; {@link dev.orderless.outbox.OutboxRelay}s, any number, publish it
 * with confirms and remove it only once confirmed. Every entry is published at least once, refused up
 * front, or parked with its reason for an operator ({@link dev.orderless.outbox.ParkedEntries}); a relay
 * never ends while saying it runs.
 */
package dev.orderless.outbox;
